function applyFormula(formula, row) {
  const { evaluate } = require("./safe-math");
  return evaluate(formula, row);
}
