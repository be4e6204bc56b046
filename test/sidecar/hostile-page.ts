/**
 * A hostile web page that knows the sidecar's port and a pending approval id (the worst case)
 * but not the token. It tries every way a page can reach a local API and reports what it could
 * read; `window.attack()` resolves with one entry per attempt.
 */
export function hostilePage(sidecarPort: number, approvalId: string): string {
  const base = `http://127.0.0.1:${sidecarPort}`;
  return `<!doctype html><html><body><iframe name="sink" id="sink"></iframe><script>
const base = ${JSON.stringify(base)};
const decision = base + '/v1/inbox/' + ${JSON.stringify(approvalId)} + '/decision';
async function tryFetch(name, url, init) {
  try {
    const r = await fetch(url, init);
    let text = '';
    try { text = await r.text(); } catch (e) { text = 'unreadable'; }
    return { name, outcome: 'response', status: r.status, type: r.type, text };
  } catch (e) {
    return { name, outcome: 'blocked', text: String(e && e.name) };
  }
}
function tryEventSource() {
  return new Promise((resolve) => {
    const es = new EventSource(base + '/v1/events');
    let got = '';
    es.onmessage = (m) => { got += m.data; };
    es.onerror = () => { es.close(); resolve({ name: 'eventsource', outcome: 'error', text: got }); };
    es.onopen = () => { got += '[open]'; };
  });
}
function tryWebSocket(protocols) {
  return new Promise((resolve) => {
    let got = '';
    let ws;
    try { ws = new WebSocket(base.replace('http', 'ws') + '/v1/ws', protocols); }
    catch (e) { resolve({ name: 'websocket', outcome: 'throw', text: String(e) }); return; }
    ws.onopen = () => { got += '[open]'; };
    ws.onmessage = (m) => { got += String(m.data); };
    ws.onclose = (c) => resolve({ name: 'websocket ' + protocols.join(','), outcome: 'closed', code: c.code, text: got });
  });
}
function tryForm(enctype, target) {
  return new Promise((resolve) => {
    let sink = document.getElementById(target);
    if (sink === null) {
      sink = document.createElement('iframe');
      sink.name = target; sink.id = target;
      document.body.appendChild(sink);
    }
    sink.onload = () => resolve({ name: 'form ' + enctype, outcome: 'submitted', text: '' });
    const f = document.createElement('form');
    f.method = 'POST'; f.action = decision; f.enctype = enctype; f.target = target;
    const i = document.createElement('input');
    i.name = '{"decision":"approve","x":"'; i.value = '"}';
    f.appendChild(i); document.body.appendChild(f); f.submit();
  });
}
window.attack = async () => [
  await tryFetch('fetch inbox', base + '/v1/inbox'),
  await tryFetch('fetch inbox with a guessed token', base + '/v1/inbox', { headers: { Authorization: 'Bearer guess' } }),
  await tryFetch('fetch health', base + '/health'),
  await tryFetch('no-cors text/plain approve', decision, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{"decision":"approve"}' }),
  await tryFetch('cors json approve', decision, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"decision":"approve"}' }),
  await tryFetch('fetch events stream', base + '/v1/events'),
  await tryEventSource(),
  await tryWebSocket(['snotra.v1']),
  await tryWebSocket(['snotra.v1', 'snotra.token.guess']),
  await tryForm('text/plain', 'sink'),
  await tryForm('application/x-www-form-urlencoded', 'sink-urlencoded'),
  await tryForm('multipart/form-data', 'sink-multipart'),
];
</script></body></html>`;
}
