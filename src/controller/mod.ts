// controller: controller election, partition state (leader, ISR, epochs) for topics, leader
// elections (broker failure, controlled shutdown, preferred and unclean on request, automatic
// rebalance), partition reassignment, replica assignment (rack-aware), topic creation, partition
// addition and deletion through the registry, and the channel to brokers.
//
// Invariants: one event queue; every controller write is fenced on /controller_epoch's version,
// and every partition-state write is conditional on the partition epoch; brokers learn partition
// state only from the controller (LeaderAndIsr/UpdateMetadata).
export * from "./assignment.ts";
export * from "./channel.ts";
export * from "./config_admin.ts";
export * from "./controller.ts";
export * from "./topic_admin.ts";
export * from "./topic_names.ts";
export * from "./registry_failure.ts";
