function loadPipeline(text) {
  const yaml = require("js-yaml");
  return yaml.load(text, { schema: yaml.JSON_SCHEMA });
}
