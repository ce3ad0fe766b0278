// controller: controller election, partition state (leader, ISR, epochs) for topics, replica
// assignment, topic creation and deletion through the registry, and the channel to brokers.
//
// Invariants: one event queue; every partition-state write is fenced on /controller_epoch's
// version; brokers learn partition state only from the controller (LeaderAndIsr/UpdateMetadata).
export * from "./assignment.ts";
export * from "./channel.ts";
export * from "./config_admin.ts";
export * from "./controller.ts";
export * from "./topic_admin.ts";
export * from "./topic_names.ts";
