// testupstream.js: stands in for an LLM API in the gateway test (no model
// runs here). It answers a chat completion citing [S1] and echoes what it
// received, so the test can check the rewritten body the gateway sent and
// the answer-check headers it added.
export default {
  async fetch(request) {
    const received = await request.json();
    const gateHeaders = {};
    for (const [k, v] of request.headers) if (k.startsWith("x-ctxgate-")) gateHeaders[k] = v;
    const answer = {
      id: "test-upstream",
      object: "chat.completion",
      created: 0,
      model: received.model || "test",
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant",
        content: "Water boils at 100 degrees Celsius at sea level [S1]. It boils lower at altitude [S9]. Unsourced sentence." } }],
      received,
      received_headers: gateHeaders,
    };
    return new Response(JSON.stringify(answer), { headers: { "content-type": "application/json" } });
  },
};
