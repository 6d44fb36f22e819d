#!/usr/bin/env node
// A loopback reverse proxy that adds the bearer token, for clients that send
// no auth header (the MCP conformance suite). The endpoint itself never takes
// a token anywhere but the Authorization header.
//
// Like any reverse proxy it names its upstream: a Host naming the proxy, and
// an Origin of the proxy's own origin, are rewritten to the server's. Every
// other Host or Origin passes through unchanged for the server to judge, so
// DNS-rebinding checks still reach it.
//
// Env: TERMSPRAWL_MCP_URL (http://127.0.0.1:PORT/mcp), TERMSPRAWL_TOKEN.
// Prints the port it listens on (127.0.0.1), then serves until killed.

'use strict';

const http = require('node:http');

const target = new URL(process.env.TERMSPRAWL_MCP_URL);
const token = process.env.TERMSPRAWL_TOKEN;

const server = http.createServer((request, response) => {
  const port = server.address().port;
  const ours = [`127.0.0.1:${port}`, `localhost:${port}`];
  const headers = { ...request.headers, authorization: `Bearer ${token}` };
  if (ours.includes(headers.host)) headers.host = target.host;
  if (ours.some((authority) => headers.origin === `http://${authority}`)) headers.origin = target.origin;
  const upstream = http.request(
    { host: target.hostname, port: target.port, path: request.url, method: request.method, headers },
    (answer) => {
      response.writeHead(answer.statusCode, answer.headers);
      answer.pipe(response);
    },
  );
  upstream.on('error', (error) => {
    if (!response.headersSent) response.writeHead(502);
    response.end(String(error));
  });
  request.pipe(upstream);
});

server.listen(0, '127.0.0.1', () => console.log(server.address().port));
