function compileTemplate(source) {
  return (data) => source.replace(/\{\{(\w+)\}\}/g, (_, key) => String(data[key] ?? ""));
}
