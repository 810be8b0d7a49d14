import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '../../../src/core/errors.js';
import { parseForm } from '../../../src/http/plugins/form-body.js';

const parse = (text: string | Uint8Array) => parseForm(typeof text === 'string' ? Buffer.from(text) : text);

describe('parseForm', () => {
  it('decodes names and values, + as space, and drops empty values', () => {
    expect({ ...parse('grant_type=client_credentials&client_id=a%2Bb&x=c+d&empty=&bare') }).toEqual({
      grant_type: 'client_credentials',
      client_id: 'a+b',
      x: 'c d',
    });
  });

  it('keeps UTF-8 text', () => {
    expect(parse('name=%E2%82%AC').name).toBe('€');
  });

  it.each([
    ['a repeated parameter', 'grant_type=a&grant_type=b', /repeated/],
    ['a repeated empty parameter', 'scope=&scope=', /repeated/],
    ['a bad percent-escape', 'a=%zz', /form encoding/],
    ['a percent-escaped invalid UTF-8 byte', 'a=%ff', /form encoding/],
    ['a truncated UTF-8 sequence', 'a=%e2%82', /form encoding/],
    ['raw invalid UTF-8', Buffer.from([0x61, 0x3d, 0xff, 0xfe]), /UTF-8/],
  ])('refuses %s', (_name, body, message) => {
    expect(() => parse(body)).toThrow(InvalidRequest);
    expect(() => parse(body)).toThrow(message);
  });

  it('refuses a kept parameter holding a control character, in its name or value, raw or percent-encoded, once the form parsed', () => {
    for (const body of ['grant_type=client%00credentials', 'grant_type=a\u0001b', 'scope=x&x%1B=1', 'client_id=a%C2%85b']) {
      expect(() => parse(body), body).toThrow(InvalidRequest);
      expect(() => parse(body), body).toThrow(/contains a control character$/);
    }
    // Named when it is a parameter Connect knows, else "a parameter".
    expect(() => parse('a=1&client_id=x%0A')).toThrow('client_id contains a control character');
    expect(() => parse('x%0A=1&client_id=y')).toThrow('a parameter contains a control character');
    // A malformed form is refused as such first; a dropped (empty) parameter is not looked at.
    expect(() => parse('scope=%01&scope=2')).toThrow(/repeated/);
    expect(() => parse('scope=%01&a=%zz')).toThrow(/form encoding/);
    expect({ ...parse('x%01=&grant_type=client_credentials') }).toEqual({ grant_type: 'client_credentials' });
  });

  it('does not let a parameter named __proto__ reach the prototype', () => {
    const params = parse('__proto__=x&constructor=y');
    expect(params.__proto__).toBe('x');
    expect(params.constructor).toBe('y');
    expect(Object.keys(params)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(Object.getPrototypeOf(params))).toBeNull();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('inherits nothing, so a name of an Object method is just a parameter', () => {
    const params = parse('grant_type=client_credentials');
    expect('toString' in params).toBe(false);
    expect('hasOwnProperty' in params).toBe(false);
    expect(() => parse('toString=a&toString=b')).toThrow(/repeated/);
    expect(parse('valueOf=v').valueOf).toBe('v');
  });
});
