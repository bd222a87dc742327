import { describe, expect, it } from "vitest";
import { parseCsv, toCsv } from "../src/lib/csv.js";

describe("CSV", () => {
  it("quotes what needs quoting and reads back what it wrote", () => {
    const rows = [
      ["google.com", 1234, 45.5],
      ['Say "hi", then', 0, null],
      ["line\nbreak", 1, 2],
    ];
    const text = toCsv(["Organization", "Messages", "Pass %"], rows);
    expect(text).toBe(
      'Organization,Messages,Pass %\r\ngoogle.com,1234,45.5\r\n"Say ""hi"", then",0,\r\n"line\nbreak",1,2\r\n',
    );
    expect(parseCsv(text)).toEqual([
      ["Organization", "Messages", "Pass %"],
      ["google.com", "1234", "45.5"],
      ['Say "hi", then', "0", ""],
      ["line\nbreak", "1", "2"],
    ]);
  });

  it("keeps text that a spreadsheet would run as a formula from running", () => {
    expect(toCsv(["a"], [["=HYPERLINK(1)"], ["-2"], ["-x"], ["@me"]])).toBe(
      "a\r\n'=HYPERLINK(1)\r\n-2\r\n'-x\r\n'@me\r\n",
    );
  });
});
