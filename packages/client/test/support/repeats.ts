/**
 * The first run of `words` consecutive words that occurs twice in `text`
 * (case, punctuation and code spelling ignored), or `undefined`. An error
 * message is its description, the request, and the hint: a hint that
 * restates the description shows up here.
 */
export function repeatedPhrase(text: string, words = 5): string | undefined {
  const tokens = text.toLowerCase().match(/[a-z0-9_]+/g) ?? [];
  const seen = new Map<string, number>();
  for (let i = 0; i + words <= tokens.length; i += 1) {
    const phrase = tokens.slice(i, i + words).join(' ');
    const first = seen.get(phrase);
    // Overlapping runs of one repeated word ("a a a a a a") are not a repeat of a phrase.
    if (first !== undefined && i >= first + words) return phrase;
    if (first === undefined) seen.set(phrase, i);
  }
  return undefined;
}
