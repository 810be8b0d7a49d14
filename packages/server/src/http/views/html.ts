/** HTML that is already safe to insert as is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * A tagged template for HTML: every interpolated value is escaped unless it
 * is {@link SafeHtml} (the result of another `html` call); arrays are joined;
 * `null`, `undefined` and `false` render nothing.
 */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * A catalogue entry as HTML, its `{name}` placeholders filled: the entry's
 * own text is escaped, and each value is rendered as {@link html} renders
 * it (a string escaped, {@link SafeHtml} as it is).
 *
 * @example
 * fill('{client} wants to link your account.', { client: html`<strong>${name}</strong>` });
 */
export function fill(template: string, values: Readonly<Record<string, SafeHtml | string>> = {}): SafeHtml {
  const parts = template.split(/\{(\w+)\}/);
  return new SafeHtml(
    parts
      .map((part, i) => {
        if (i % 2 === 0) return escapeHtml(part);
        const value = values[part];
        if (value === undefined) throw new Error(`no value for the placeholder {${part}}`);
        return render(value);
      })
      .join(''),
  );
}
