/**
 * The SMTP client of `pnpm bench intake`, in a worker thread: a sender is another machine, and
 * its work must not run on the event loop of the intake being measured. Plain JavaScript: a
 * worker thread does not get the tsx loader of the process that starts it.
 */
import { parentPort, workerData } from "node:worker_threads";
import nodemailer from "nodemailer";

/** @type {{ port: number, connections: number, mails: Uint8Array[] }} */
const { port, connections, mails } = workerData;
const transport = nodemailer.createTransport({
  host: "127.0.0.1",
  port,
  secure: false,
  pool: true,
  maxConnections: connections,
  maxMessages: Number.POSITIVE_INFINITY,
});
const started = performance.now();
const replies = await Promise.all(
  mails.map((mail) =>
    transport.sendMail({
      envelope: { from: "dmarc@receiver.example", to: ["rua@reports.bench"] },
      raw: Buffer.from(mail),
    }),
  ),
);
const seconds = (performance.now() - started) / 1000;
transport.close();
parentPort.postMessage({ seconds, responses: replies.map((info) => info.response ?? "") });
