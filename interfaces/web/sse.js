// Server-sent events read from a fetch() body: EventSource can neither POST nor send a header.
// Yields {event, id, data} per frame; comments (`: ping`) are skipped.

function parseFrame(block) {
  const frame = { event: "message", id: null, data: "" };
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") frame.event = value;
    else if (field === "id") frame.id = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  frame.data = JSON.parse(data.join("\n"));
  return frame;
}

export async function* readEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    // Normalise line ends first, so a frame's end is always a blank line "\n\n".
    buffer = (buffer + value).replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (frame) yield frame;
    }
  }
}
