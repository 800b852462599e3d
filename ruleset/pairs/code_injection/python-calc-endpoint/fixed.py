def calculate(expression):
    import ast
    result = ast.literal_eval(expression)
    return {"expression": expression, "result": result}
