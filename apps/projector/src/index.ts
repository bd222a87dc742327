export { runProjector } from "./run-projector.js";
