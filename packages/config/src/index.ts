export { duration, integer, oneOf, optionalPort, port, url } from "./fields.js";
export { hostPorts } from "./host-ports.js";
export { ConfigError, parseSettings, readAllSettings, type SettingProblem } from "./settings.js";
