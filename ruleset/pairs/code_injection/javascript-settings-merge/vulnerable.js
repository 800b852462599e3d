function applyFormula(formula, row) {
  return eval(formula.replace(/\$(\w+)/g, (_, k) => JSON.stringify(row[k])));
}
