// pino JSON logs, pretty-printed when a person is watching a terminal.
import pino, { type Logger } from 'pino';

export function createLogger(level: string, destination: 1 | 2 = 1): Logger {
  const stream = destination === 1 ? process.stdout : process.stderr;
  if (stream.isTTY) {
    return pino({
      level,
      transport: { target: 'pino-pretty', options: { destination, colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } },
    });
  }
  return pino({ level, base: undefined }, pino.destination({ fd: destination, sync: true }));
}
