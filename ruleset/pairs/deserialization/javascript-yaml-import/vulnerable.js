function loadPipeline(text) {
  const yaml = require("js-yaml");
  return yaml.load(text, { schema: yaml.DEFAULT_FULL_SCHEMA });
}
