def apply_discount_rule(rule_source, price):
    rates = {"none": 0.0, "member": 0.05, "staff": 0.2}
    discount = price * rates.get(rule_source, 0.0)
    return price - discount
