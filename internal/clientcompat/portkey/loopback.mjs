// Preloaded (node --import) before Portkey's gateway, which it leaves unchanged but for where it
// listens. Its server (build/start-server.js) calls @hono/node-server's serve with a port and no
// host, so Node would listen on every interface: a listen without a host is bound to 127.0.0.1
// here instead. Started with --port=0 the gateway announces the port it was asked for, not the
// one it got, so the address it listens on is written to stderr as "listening on HOST:PORT",
// the line cmd/mockgateway/portkey_test.go waits for.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args[1] === undefined || typeof args[1] === 'function')) {
    if (args[1] === undefined) args.splice(1, 1);
    args.splice(1, 0, '127.0.0.1');
  }
  this.once('listening', () => {
    const a = this.address();
    process.stderr.write(`listening on ${a.address}:${a.port}\n`);
  });
  return listen.apply(this, args);
};
