// controller: controller election, partition state (leader, ISR, epochs) for topics, leader
// elections (broker failure, controlled shutdown, preferred and unclean on request, automatic
// rebalance), partition reassignment, replica assignment (rack-aware), topic creation, partition
// addition and deletion through the registry, and the channel to brokers (channel.ts; to other
// brokers over the client's connections, controller_channel.ts, with control_requests.ts building
// and decoding LeaderAndIsr, UpdateMetadata and StopReplica for both ends). elect_leaders.ts is a
// broker's ElectLeaders to a controller elsewhere. alter_partition.ts decides a leader's ISR
// proposal (AlterPartition, KIP-497).
//
// Invariants: one event queue; every controller write is fenced on /controller_epoch's version,
// and every partition-state write is conditional on the partition epoch; brokers learn partition
// state only from the controller (LeaderAndIsr/UpdateMetadata); the controller never waits on a
// remote broker, and a broker's control requests arrive in the order they were made.
export * from "./alter_partition.ts";
export * from "./assignment.ts";
export * from "./channel.ts";
export * from "./config_admin.ts";
export * from "./control_requests.ts";
export * from "./controller.ts";
export * from "./controller_channel.ts";
export * from "./elect_leaders.ts";
export * from "./topic_admin.ts";
export * from "./topic_names.ts";
export * from "./registry_failure.ts";
