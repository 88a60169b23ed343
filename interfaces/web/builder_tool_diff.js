// What changes for the model when an agent's pin moves from one workflow version to another: the
// tool's name, description and each parameter (added, removed, or changed in type, required, enum,
// default, description). Pure: tools in ({name, description, parameters} or null for no pin), rows
// out as {change, field, before, after}; `undefined` is "not there".

// The order a parameter's attributes are listed in; any other JSON Schema keyword follows them.
const ATTRIBUTES = ["type", "required", "enum", "default", "description"];

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// A parameter's schema with `required` folded in, as the model reads it.
function parameters(tool) {
  const schema = tool?.parameters ?? {};
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(Object.entries(schema.properties ?? {})
    .map(([name, property]) => [name, { ...property, required: required.has(name) }]));
}

// One line for a whole parameter: `integer · required · default 3 · The number of days`.
export function summary(parameter) {
  const parts = [parameter.type, parameter.required ? "required" : "optional"];
  if (parameter.enum !== undefined) parts.push(`one of ${JSON.stringify(parameter.enum)}`);
  if (parameter.default !== undefined) parts.push(`default ${JSON.stringify(parameter.default)}`);
  if (parameter.description) parts.push(parameter.description);
  return parts.join(" · ");
}

function attributes(a, b) {
  const others = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((key) => !ATTRIBUTES.includes(key));
  return [...ATTRIBUTES, ...others.sort()];
}

function parameterRows(before, after) {
  const rows = [];
  for (const [name, now] of Object.entries(after)) {
    const was = before[name];
    const field = `parameters.${name}`;
    if (was === undefined) {
      rows.push({ change: "added", field, before: undefined, after: summary(now) });
      continue;
    }
    for (const key of attributes(was, now).filter((k) => !same(was[k], now[k]))) {
      rows.push({ change: "changed", field: `${field}.${key}`, before: was[key], after: now[key] });
    }
  }
  for (const [name, was] of Object.entries(before).filter(([n]) => !(n in after))) {
    rows.push({ change: "removed", field: `parameters.${name}`, before: summary(was), after: undefined });
  }
  return rows;
}

export function toolDiff(before, after) {
  const rows = ["name", "description"].filter((key) => before?.[key] !== after[key])
    .map((key) => ({ change: before ? "changed" : "added", field: key, before: before?.[key], after: after[key] }));
  return [...rows, ...parameterRows(parameters(before), parameters(after))];
}
