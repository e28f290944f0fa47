// router.js: test and multi-tenant plumbing for config.capnp. The first path
// segment names a gate Worker bound here (one per policy); the rest of the
// path goes to it: /wikigr/v1/gate -> the "wikigr" Worker's /v1/gate. The
// gate Worker itself is what a deployment runs (wrangler.toml).
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const m = /^\/([A-Za-z0-9_-]+)(\/.*)$/.exec(url.pathname);
    const target = m && Object.hasOwn(env, m[1]) ? env[m[1]] : null;
    if (!target) {
      const body = JSON.stringify({ error: { code: "not_found", message: "no gate for path " + url.pathname, field: "" } });
      return new Response(body, { status: 404, headers: { "content-type": "application/json" } });
    }
    url.pathname = m[2];
    return target.fetch(new Request(url, request));
  },
};
