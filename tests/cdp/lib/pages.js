// Local test pages on two loopback sites: 127.0.0.1:<a> and localhost:<b>
// (different hosts, so different sites: an iframe from one in the other is
// cross-site and Chromium puts it in its own renderer).
import http from 'node:http';

// `rel=icon` to nothing: no favicon request, whose 404 would be one more console error and request.
const html = (title, body, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><link rel="icon" href="data:,">${head}</head><body>${body}</body></html>`;

/** The credentials `/auth` accepts: user name and password. */
export const AUTH = ['user', 'pass'];

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
    // What the MCP browser servers' tools act on: a button, a text field, a
    // prompt() behind a button, a hover target, a select, a file input, a key
    // listener, a drag source and a drop zone, console messages of three levels, and a solid block at the top
    // left for decoded-pixel checks.
    '/tools': () =>
      html(
        'Tools',
        `<div style="position:absolute;left:0;top:0;width:120px;height:40px;background:#0000ff"></div>
         <h1 style="margin-top:60px">Tools page</h1>
         <button class="press" onclick="document.getElementById('out').textContent='clicked '+(++window.clicks)">Press me</button>
         <p id="out">not clicked</p>
         <label>Your name <input id="name" oninput="document.getElementById('echo').textContent='typed '+this.value"></label>
         <p id="echo">nothing typed</p>
         <button onclick="document.getElementById('answer').textContent='answer: '+prompt('Who are you?','nobody')">Ask me</button>
         <p id="answer">no answer</p>
         <p onmouseover="this.textContent='hovered'">Hover me</p>
         <label>Colour <select onchange="document.getElementById('picked').textContent='picked '+this.value"><option value="red">Red</option><option value="green">Green</option></select></label>
         <p id="picked">nothing picked</p>
         <label>Upload <input type="file" onchange="document.getElementById('chosen').textContent='chosen '+this.files[0].name"></label>
         <p id="chosen">no file</p>
         <p id="key">no key</p>
         <div style="position:absolute;left:400px;top:120px;width:200px">
           <p draggable="true" ondragstart="event.dataTransfer.setData('text/plain','moved')">Drag me</p>
           <p><a href="/frame" target="_blank">Open a popup</a></p>
           <p style="height:40px" ondragover="event.preventDefault()" ondrop="event.preventDefault();this.textContent='dropped '+event.dataTransfer.getData('text/plain')">Drop here</p>
         </div>
         <script>document.addEventListener('keydown',(e)=>document.getElementById('key').textContent='key '+e.key)</script>
         <script>window.clicks=0;console.log('tools page log');console.warn('tools page warning');console.error('tools page error')</script>`,
        // Compact, so it fits the viewport: a scrollbar would be in the screenshots.
        '<style>html,body{margin:0;background:#ffffff}p,h1{margin:4px 0}.press{color:rgb(1,2,3)}</style>',
      ),
    '/data.json': () => ({ type: 'application/json', body: '{"n":42}' }),
    // A page with a service worker and a shared worker (targets of their own).
    '/workers': () =>
      html('Workers', `<p>workers</p><script>navigator.serviceWorker.register('/sw.js'); window.shared = new SharedWorker('/shared.js');</script>`),
    '/sw.js': () => ({ type: 'text/javascript', body: "self.hello = 'from the service worker';" }),
    '/shared.js': () => ({ type: 'text/javascript', body: "self.hello = 'from the shared worker'; onconnect = (e) => e.ports[0].postMessage('hi');" }),
    // A file input that shows each chosen file's name, size and first line.
    '/upload': () =>
      html(
        'Upload',
        `<input id="files" type="file" multiple onchange="show(this.files)"><pre id="chosen">no file</pre>
         <script>async function show(files){const out=[];for(const f of files){out.push(f.name+' '+f.size+' '+(await f.text()).split('\\n')[0])}document.getElementById('chosen').textContent=out.join('\\n')}</script>`,
      ),
    '/download': () => html('Download', `<a id="get" href="/report.txt">Get the report</a>`),
    // Sent as an attachment: a download, never a page.
    '/report.txt': () => ({
      type: 'text/plain',
      body: 'quarterly report\nline two\n',
      headers: { 'content-disposition': 'attachment; filename="report.txt"' },
    }),
    // HTTP Basic auth (user `user`, password `pass`): 401 with a challenge until the credentials come.
    '/auth': (req) =>
      req.headers.authorization === `Basic ${Buffer.from(AUTH.join(':')).toString('base64')}`
        ? html('Signed in', '<p id="who">signed in as user</p>')
        : { status: 401, headers: { 'www-authenticate': 'Basic realm="termsprawl test"' }, type: 'text/html; charset=utf-8', body: html('Denied', '<p id="who">nobody</p>') },
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
      // A route answers HTML, or { type, body, status?, headers? } for anything else.
      const answer = page(req);
      const { type, body, status = 200, headers: extra = {} } = typeof answer === 'string' ? { type: 'text/html; charset=utf-8', body: answer } : answer;
      const headers = { 'content-type': type, 'cache-control': 'no-store', ...extra };
      if (url.pathname === '/cookies') headers['set-cookie'] = 'from_server=server-value; Path=/';
      res.writeHead(status, headers).end(body);
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
