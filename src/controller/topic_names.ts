// Topic name rules, as Kafka's org.apache.kafka.common.internals.Topic enforces them.

import { topicNameLengthMax } from "../util/mod.ts";

const legal = /^[a-zA-Z0-9._-]+$/;

/** Null when the name is legal, else the reason, worded as Kafka words it. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return "Topic name is illegal, it can't be empty";
  if (name === "." || name === "..") return "Topic name cannot be \".\" or \"..\"";
  if (name.length > topicNameLengthMax) {
    return `Topic name is illegal, it can't be longer than ${topicNameLengthMax} characters, topic name: ${name}`;
  }
  if (!legal.test(name)) {
    return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  }
  return null;
}

/** '.' and '_' collide in metric names, so Kafka refuses topics that differ only by them. */
export function unifyCollisionChars(name: string): string {
  return name.replaceAll(".", "_");
}

export function collidingTopic(name: string, existing: Iterable<string>): string | null {
  const key = unifyCollisionChars(name);
  for (const t of existing) if (t !== name && unifyCollisionChars(t) === key) return t;
  return null;
}

export const internalTopics = new Set(["__consumer_offsets", "__transaction_state"]);
