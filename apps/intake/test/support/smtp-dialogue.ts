import { connect, type Socket } from "node:net";

export interface Reply {
  code: number;
  text: string;
}

/**
 * A bare SMTP conversation over a socket, for the protocol steps a mail library does not let a
 * test take one at a time (a declared SIZE, a connection held open). Replies are read whole,
 * multi-line ones included.
 */
export class SmtpDialogue {
  private buffered = "";
  private waiting: ((reply: Reply | null) => void) | null = null;
  private closed = false;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      this.buffered += chunk;
      this.deliver();
    });
    socket.on("close", () => {
      this.closed = true;
      this.deliver();
    });
    socket.on("error", () => undefined);
  }

  static async open(port: number, host = "127.0.0.1"): Promise<SmtpDialogue> {
    const socket = connect(port, host);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return new SmtpDialogue(socket);
  }

  /** The next whole reply, or null once the server has closed the connection. */
  read(): Promise<Reply | null> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.deliver();
    });
  }

  async command(line: string): Promise<Reply | null> {
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  write(data: string): void {
    this.socket.write(data);
  }

  close(): void {
    this.socket.destroy();
  }

  private deliver(): void {
    if (!this.waiting) return;
    const match = /^(?:\d{3}-[^\n]*\n)*(\d{3}) [^\n]*\n/.exec(this.buffered);
    if (match) {
      const text = match[0];
      this.buffered = this.buffered.slice(text.length);
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ code: Number(match[1]), text: text.trim() });
    } else if (this.closed) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(null);
    }
  }
}
