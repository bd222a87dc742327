import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

export const natsUrl = process.env.EVENTS_NATS_URL || "nats://127.0.0.1:4222";

export interface StreamMessage {
  subject: string;
  msgId: string | undefined;
  body: Record<string, unknown> & { id: string; type: string };
}

/** Every message the stream holds now, in its order; [] when the stream does not exist. */
export async function streamMessages(stream: string): Promise<StreamMessage[]> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream).catch(() => null);
    if (!info || info.state.messages === 0) return [];
    const messages: StreamMessage[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(stream, { seq });
      if (!message) continue;
      messages.push({
        subject: message.subject,
        msgId: message.header?.get("Nats-Msg-Id"),
        body: JSON.parse(new TextDecoder().decode(message.data)),
      });
    }
    return messages;
  } finally {
    await nc.close();
  }
}

/** The stream's configuration (its limits), or null when it does not exist. */
export async function streamConfig(stream: string) {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(stream).catch(() => null))?.config ?? null;
  } finally {
    await nc.close();
  }
}

export async function deleteStream(stream: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
}
