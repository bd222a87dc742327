import { dictionary } from "@zxcvbn-ts/language-common";

/**
 * The 49,233 most common passwords of public breach compilations, as zxcvbn-ts ships them in its
 * `passwords-common` dictionary (@zxcvbn-ts/language-common, MIT): installed with the package,
 * read offline, never sent anywhere.
 */
let common: Set<string> | undefined;

function commonPasswords(): Set<string> {
  common ??= new Set(dictionary["passwords-common"].map((password) => password.toLowerCase()));
  return common;
}

/** Digits, spaces and punctuation around a word: what "password1234!" adds to "password". */
const padding = /^[\p{N}\p{P}\p{S}\p{Z}\s]+|[\p{N}\p{P}\p{S}\p{Z}\s]+$/gu;

/** The shortest unit the text repeats ("abcabcabc" → "abc"), or the text itself. */
function repeatedUnit(text: string): string {
  const chars = [...text];
  for (let size = 1; size <= chars.length / 2; size++) {
    if (chars.length % size !== 0) continue;
    const unit = chars.slice(0, size).join("");
    if (unit.repeat(chars.length / size) === text) return unit;
  }
  return text;
}

/**
 * Whether a password is one a guesser tries first (NIST SP 800-63B 3.1.1.2: breached, common,
 * repetitive): the list's entries as they are, padded with digits or punctuation
 * ("password1234!"), or repeated ("passwordpassword", "abcabcabcabc"); and passwords with no
 * letter at all beside a few repeated symbols or digits ("111111111111").
 */
export function isCommonPassword(password: string): boolean {
  const text = password.normalize("NFKC").toLowerCase();
  const list = commonPasswords();
  const core = text.replace(padding, "");
  for (const candidate of new Set([text, core, repeatedUnit(text), repeatedUnit(core)])) {
    if (list.has(candidate)) return true;
  }
  // A repeated short unit is no secret: "aaaaaaaaaaaa", "121212121212", "abcabcabcabc".
  return [...repeatedUnit(text)].length <= 3 || (core === "" && isSequence(text));
}

/** "123456789012", "987654321098": runs of consecutive digits, up or down, wrapping at 9. */
function isSequence(text: string): boolean {
  if (!/^\d+$/.test(text)) return false;
  const step = (Number(text[1]) - Number(text[0]) + 10) % 10;
  if (step !== 1 && step !== 9) return false;
  for (let i = 1; i < text.length; i++) {
    if ((Number(text[i]) - Number(text[i - 1]) + 10) % 10 !== step) return false;
  }
  return true;
}
