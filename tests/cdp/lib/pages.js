// Local test pages on two loopback sites: 127.0.0.1:<a> and localhost:<b>
// (different hosts, so different sites: an iframe from one in the other is
// cross-site and Chromium puts it in its own renderer).
import http from 'node:http';

const html = (title, body, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

function routes(other) {
  return {
    '/': () =>
      html(
        'Home',
        `<h1 id="h">Hello from the test</h1>
         <button id="btn" onclick="document.getElementById('out').textContent='clicked '+(++window.clicks)">Click</button>
         <div id="out">not clicked</div>
         <input id="name" oninput="document.getElementById('echo').textContent=this.value">
         <div id="echo"></div>
         <script>window.clicks=0;setTimeout(()=>{const d=document.createElement('p');d.id='late';d.textContent='late arrival';document.body.appendChild(d)},400)</script>`,
      ),
    // Solid colours at known places, for decoded-pixel checks.
    '/colours': () =>
      html(
        'Colours',
        `<div style="position:absolute;left:0;top:0;width:200px;height:150px;background:#0000ff"></div>`,
        '<style>html,body{margin:0;height:100%;background:#ff0000}</style>',
      ),
    '/cookies': (req) => html('Cookies', `<pre id="sent">${(req.headers.cookie || '').replace(/</g, '&lt;')}</pre>`),
    '/frame-host': () =>
      html('Frame host', `<h1>outer</h1><iframe id="f" src="${other}/frame" width="400" height="200"></iframe>`),
    '/frame': () => html('Inner', `<h2 id="inner">inner frame content</h2><button id="ib" onclick="this.textContent='pressed'">press</button>`),
  };
}

function serve(host, otherOrigin) {
  return new Promise((resolve, reject) => {
    let table;
    const server = http.createServer((req, res) => {
      const url = new URL(req.url, 'http://x');
      const page = table[url.pathname];
      if (!page) {
        res.writeHead(404).end('not found');
        return;
      }
      const headers = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' };
      if (url.pathname === '/cookies') headers['set-cookie'] = 'from_server=server-value; Path=/';
      res.writeHead(200, headers).end(page(req));
    });
    server.once('error', reject);
    server.listen(0, host, () => {
      server.setOther = (o) => (table = routes(o));
      server.setOther(otherOrigin);
      resolve(server);
    });
  });
}

/** Serves the pages; returns { a, b, close } where a is http://127.0.0.1:<port>, b is http://localhost:<port>. */
export async function servePages() {
  const sa = await serve('127.0.0.1', '');
  const sb = await serve('127.0.0.1', '');
  const a = `http://127.0.0.1:${sa.address().port}`;
  const b = `http://localhost:${sb.address().port}`;
  sa.setOther(b);
  sb.setOther(a);
  return {
    a,
    b,
    close: () => Promise.all([sa, sb].map((s) => new Promise((r) => { s.closeAllConnections?.(); s.close(r); }))),
  };
}
