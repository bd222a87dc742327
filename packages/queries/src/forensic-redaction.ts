/**
 * What /forensic shows of a failure report's personal fields (docs/privacy.md): with redaction on
 * (a tenant's default), every address's local part masked and the subject removed, in the Subject
 * field and in the Headers; a shredded report shows `removed` in both.
 */
export const removed = "(removed)";

/** An address's local part stands for a person; its domain is what DMARC reports are about. */
const address = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;

export function maskAddresses(text: string): string {
  return text.replace(address, (_match, domain: string) => `*****@${domain}`);
}

/** The header block without its Subject field (and the field's folded lines), addresses masked. */
export function redactHeaders(headers: string): string {
  const kept: string[] = [];
  let inSubject = false;
  for (const line of headers.split("\n")) {
    const folded = /^[ \t]/.test(line);
    if (!folded) inSubject = /^subject\s*:/i.test(line);
    if (!inSubject) kept.push(line);
  }
  return maskAddresses(kept.join("\n"));
}
