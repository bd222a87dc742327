export { integer, oneOf, port, url } from "./fields.js";
export { ConfigError, parseSettings, type SettingProblem } from "./settings.js";
