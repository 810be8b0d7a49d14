/** C0 controls (NUL, TAB, CR, LF, ESC…), DEL and the C1 controls: none belongs in any value Connect takes. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Every control character, and the line and paragraph separators a terminal or log viewer may break lines at. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'g');

/**
 * Whether `value` holds a control character: C0 (NUL, TAB, CR, LF, ESC…),
 * DEL or C1. THE rule of every parameter, credential and header value
 * Connect reads (`http/plugins/control-characters.ts`): such a value is
 * refused with `400 invalid_request` before it reaches a store.
 */
export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/**
 * Characters that change how the text around them is shown rather than
 * showing anything: the line and paragraph separators, and the Unicode
 * directional embeddings, overrides and isolates (U+202A to U+202E, U+2066
 * to U+2069), after which text is shown in another order than it is
 * written.
 */
const REARRANGING = /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/**
 * Whether `value`, text the hosted pages show customers as it was given (a
 * client's name, a scope's description), holds a control character or a
 * character that rearranges or breaks the text shown around it
 * (docs/operator-guide.md, "Scopes"): such text could make a consent page
 * say something other than what it says.
 */
export function hasUndisplayableCharacter(value: string): boolean {
  return hasControlCharacter(value) || REARRANGING.test(value);
}

/**
 * `value` with every control character (and U+2028, U+2029) written as a
 * visible escape, `\x1b` or `\u2028`, so that a stored value printed on
 * an operator's terminal can neither move the cursor, colour the screen nor
 * start a line of its own.
 *
 * @example
 * escapeControlCharacters('a\u001b[2J\nb'); // printed as a\x1b[2J\x0ab
 */
export function escapeControlCharacters(value: string): string {
  if (!UNPRINTABLE.test(value)) return value;
  return value.replace(UNPRINTABLE_ALL, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
