/**
 * A value checked against a JSON Schema: the part of the standard pydantic writes for the core's contract
 * (pycore/commands/contract.py: `$ref` into `$defs`, `oneOf` with a `discriminator`, `anyOf`, `type`, `const`, `enum`,
 * `required`, `properties`, `additionalProperties`, `items`, `pattern`, `minLength`, `minimum`, `format: binary`
 * for bytes as base64). Import checks a file with it (web/store/exchange.js), so what comes in is what the contract
 * says, not what a second hand-written copy of it says.
 *
 *   schemaProblems(value, schema, path, root = schema) -> ["path.to.field: expected …, got …"]   (empty = valid)
 *
 * A schema's `description` (e.g. "an image media type") names what is expected where it says more than its type.
 */

/** @typedef {{[key: string]: unknown}} Schema */

const BASE64 = /^[A-Za-z0-9+/=_-]*$/;
const TYPE_NAMES = { string: "a string", integer: "a whole number", number: "a number", boolean: "true or false",
                     null: "nothing", array: "a list", object: "an object" };

/**
 * @param {unknown} value
 * @param {Schema} schema
 * @param {string} path   where the value is, for the problems' names
 * @param {Schema} [root] the schema holding `$defs`
 * @returns {string[]}
 */
export function schemaProblems(value, schema, path, root = schema) {
  /** @type {string[]} */
  const out = [];
  check(value, schema, path, root, out);
  return out;
}

/**
 * @param {unknown} value
 * @param {Schema} schema
 * @param {string} path
 * @param {Schema} root
 * @param {string[]} out
 * @returns {unknown}
 */
function check(value, schema, path, root, out) {
  if (typeof schema.$ref === "string") return check(value, resolve(root, schema.$ref), path, root, out);
  const union = /** @type {Schema[] | undefined} */ (schema.oneOf ?? schema.anyOf);
  if (union) return checkUnion(value, schema, union, path, root, out);
  const bad = () => out.push(`${path}: expected ${expected(schema, root)}, got ${show(value)}`);
  if (typeof schema.type === "string" && !hasType(value, schema.type)) return bad();
  if ("const" in schema && value !== schema.const) return bad();
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return bad();
  if (typeof value === "string" && !stringFits(value, schema)) return bad();
  if (typeof value === "number" && typeof schema.minimum === "number" && value < schema.minimum) return bad();
  if (Array.isArray(value) && isObject(schema.items)) {
    const items = /** @type {Schema} */ (schema.items);
    value.forEach((item, i) => check(item, items, `${path}[${i}]`, root, out));
  }
  if (isObject(value)) checkObject(/** @type {Record<string, unknown>} */ (value), schema, path, root, out);
  return undefined;
}

/**
 * @param {string} value
 * @param {Schema} schema
 */
function stringFits(value, schema) {
  if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) return false;
  if (typeof schema.minLength === "number" && value.length < schema.minLength) return false;
  return schema.format !== "binary" || BASE64.test(value); // bytes travel as base64 text
}

/**
 * @param {Record<string, unknown>} value
 * @param {Schema} schema
 * @param {string} path
 * @param {Schema} root
 * @param {string[]} out
 */
function checkObject(value, schema, path, root, out) {
  const properties = /** @type {Record<string, Schema>} */ (schema.properties ?? {});
  for (const key of Array.isArray(schema.required) ? schema.required : []) {
    if (!(key in value)) out.push(`${path}.${key}: expected ${expected(properties[key] ?? {}, root)}, got nothing`);
  }
  for (const [key, item] of Object.entries(value)) {
    const known = properties[key];
    if (known) check(item, known, `${path}.${key}`, root, out);
    else if (schema.additionalProperties === false) out.push(`${path}.${key}: not a field of ${schema.title ?? "this"}`);
    else if (isObject(schema.additionalProperties)) {
      check(item, /** @type {Schema} */ (schema.additionalProperties), `${path}.${key}`, root, out);
    }
  }
}

/**
 * One of several shapes: the one its discriminator names, else the first that fits. When none fits and only one
 * is of the value's JSON type, that one's problems say what is wrong inside it.
 * @param {unknown} value
 * @param {Schema} schema
 * @param {Schema[]} union
 * @param {string} path
 * @param {Schema} root
 * @param {string[]} out
 * @returns {unknown}
 */
function checkUnion(value, schema, union, path, root, out) {
  const discriminator = /** @type {{propertyName?: string, mapping?: Record<string, string>} | undefined} */ (
    schema.discriminator);
  if (discriminator?.propertyName && discriminator.mapping) {
    const tag = isObject(value) ? /** @type {Record<string, unknown>} */ (value)[discriminator.propertyName] : undefined;
    const ref = typeof tag === "string" ? discriminator.mapping[tag] : undefined;
    if (ref) return check(value, { $ref: ref }, path, root, out);
    const tags = Object.keys(discriminator.mapping);
    const where = isObject(value) ? `${path}.${discriminator.propertyName}` : path;
    out.push(`${where}: expected one of ${tags.join(", ")}, got ${show(isObject(value) ? tag : value)}`);
    return undefined;
  }
  const tries = union.map((option) => schemaProblems(value, option, path, root));
  if (tries.some((problems) => !problems.length)) return undefined;
  const sameType = union.filter((option) => hasType(value, typeOf(option, root)));
  if (sameType.length === 1) return check(value, sameType[0], path, root, out);
  out.push(`${path}: expected ${union.map((option) => expected(option, root)).join(" or ")}, got ${show(value)}`);
  return undefined;
}

/**
 * @param {Schema} root
 * @param {string} ref
 * @returns {Schema}
 */
function resolve(root, ref) {
  const defs = /** @type {Record<string, Schema>} */ (root.$defs ?? {});
  const found = defs[ref.replace(/^#\/\$defs\//, "")];
  if (!found) throw new Error(`the schema has no ${ref}`);
  return found;
}

/**
 * @param {Schema} schema
 * @param {Schema} root
 * @returns {string | undefined}
 */
function typeOf(schema, root) {
  if (typeof schema.$ref === "string") return typeOf(resolve(root, schema.$ref), root);
  return typeof schema.type === "string" ? schema.type : undefined;
}

/**
 * What a schema expects, in words.
 * @param {Schema} schema
 * @param {Schema} root
 * @returns {string}
 */
function expected(schema, root) {
  if (typeof schema.description === "string" && schema.description.length <= 40) return schema.description;
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" or ");
  if (typeof schema.$ref === "string") return expected(resolve(root, schema.$ref), root);
  if (schema.format === "binary") return "base64 text";
  const type = typeof schema.type === "string" ? schema.type : "";
  if (type === "object" && typeof schema.title === "string") return `a ${schema.title}`;
  return TYPE_NAMES[/** @type {keyof typeof TYPE_NAMES} */ (type)] ?? "something else";
}

/**
 * @param {unknown} value
 * @param {string | undefined} type
 */
function hasType(value, type) {
  switch (type) {
    case "string": return typeof value === "string";
    case "integer": return Number.isInteger(value);
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
    case "array": return Array.isArray(value);
    case "object": return isObject(value);
    default: return true;
  }
}

/** @param {unknown} v */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** @param {unknown} v */
export function show(v) {
  if (v === undefined) return "nothing";
  const text = JSON.stringify(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
