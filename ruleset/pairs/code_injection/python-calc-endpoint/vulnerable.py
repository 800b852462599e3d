def calculate(expression):
    result = eval(expression)
    return {"expression": expression, "result": result}
