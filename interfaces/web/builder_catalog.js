// What the draft's pickers offer, from the API: the tools an agent config may name (GET /api/tools),
// the built-in ones first, then each MCP server's under its name and state; and the account's
// datasets (GET /api/datasets), with how much each holds. As groups for builder_fields.js.
import { json } from "/web/api.js";

const PAGE = 100;  // the API's largest page of datasets

const plural = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;

// An MCP tool goes in the draft as `server.tool`: that name keeps reaching it when another server
// later lists a tool of the same name (its bare name would stop working then). A draft that holds
// the bare name ticks the same box.
function toolItem(tool) {
  const aliases = tool.name === tool.qualified_name ? [] : [tool.name];
  return { value: tool.qualified_name, aliases, label: tool.qualified_name, about: tool.description };
}

function serverTitle(server) {
  const why = server.error ? `: ${server.error}` : "";
  return `${server.name} · MCP server, ${server.state}${why}`;
}

export async function toolGroups() {
  const { data, servers } = await json("/api/tools");
  const builtin = { title: "Built-in", items: data.filter((tool) => tool.server === null).map(toolItem) };
  return [builtin, ...servers.map((server) => ({
    title: serverTitle(server),
    items: [
      { value: server.every_tool, label: server.every_tool, about: `every tool of ${server.name}, as it lists them` },
      ...data.filter((tool) => tool.server === server.name).map(toolItem),
    ],
  }))];
}

export async function datasetGroups() {
  const datasets = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await json(`/api/datasets?offset=${offset}&limit=${PAGE}`);
    datasets.push(...page.data);
    if (!page.has_more) break;
  }
  const items = datasets.map((dataset) => ({
    value: dataset.id, label: dataset.name,
    about: `${plural(dataset.documents, "document")}, ${plural(dataset.chunks, "chunk")}`,
  }));
  return [{ title: "", items }];
}
