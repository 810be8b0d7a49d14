import type { JsonSchema } from './schemas.js';

/**
 * The parts of an OpenAPI 3.1 document that Connect's description uses
 * (https://spec.openapis.org/oas/v3.1.1), typed so that a misspelt field
 * fails to compile rather than to describe.
 */

/** `{ $ref }` to a component. */
export interface Reference {
  readonly $ref: string;
}

export interface HeaderObject {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
}

export interface MediaType {
  readonly schema: JsonSchema;
}

export type Content = Readonly<Record<string, MediaType>>;

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Readonly<Record<string, HeaderObject | Reference>>;
  readonly content?: Content;
}

export interface Parameter {
  readonly name: string;
  readonly in: 'query' | 'header' | 'path' | 'cookie';
  readonly description: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
}

export interface RequestBody {
  readonly description?: string;
  readonly required: boolean;
  readonly content: Content;
}

/** A security requirement: scheme name to scopes (none for HTTP schemes). */
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface Server {
  readonly url: string;
  readonly description: string;
  readonly variables?: Readonly<Record<string, { readonly default: string; readonly description: string }>>;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly parameters?: readonly (Parameter | Reference)[];
  readonly requestBody?: RequestBody;
  readonly security?: readonly SecurityRequirement[];
  readonly responses: Readonly<Record<string, ResponseObject | Reference>>;
}

export type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch';

export type PathItem = Partial<Record<Method, Operation>> & {
  readonly servers?: readonly Server[];
  readonly parameters?: readonly Parameter[];
};

export interface SecurityScheme {
  readonly type: 'http';
  readonly scheme: 'basic' | 'bearer';
  readonly bearerFormat?: string;
  readonly description: string;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly jsonSchemaDialect: string;
  readonly info: { readonly title: string; readonly version: string; readonly description: string; readonly license?: { readonly name: string; readonly identifier?: string } };
  readonly servers: readonly Server[];
  readonly tags: readonly { readonly name: string; readonly description: string }[];
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>;
    readonly responses: Readonly<Record<string, ResponseObject>>;
    readonly headers: Readonly<Record<string, HeaderObject>>;
    readonly parameters: Readonly<Record<string, Parameter>>;
    readonly securitySchemes: Readonly<Record<string, SecurityScheme>>;
  };
}
