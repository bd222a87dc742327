/**
 * Okabe and Ito's palette, told apart with every common colour-vision deficiency; pass and fail
 * are blue and vermillion, never green and red.
 */
export const colours = {
  pass: "#0072B2",
  passLight: "#56B4E9",
  fail: "#D55E00",
  quarantine: "#E69F00",
  none: "#CC79A7",
  neutral: "#999999",
  green: "#009E73",
} as const;

export const axisText = "#4b5563";
export const gridLine = "#e5e7eb";
