function compileTemplate(source) {
  return new Function("data", "return `" + source + "`;");
}
