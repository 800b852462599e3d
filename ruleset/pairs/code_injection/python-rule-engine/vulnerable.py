def apply_discount_rule(rule_source, price):
    scope = {"price": price}
    exec("discount = " + rule_source, {}, scope)
    return price - scope["discount"]
