// The reference for test/bench/zk_bench.ts: ZooKeeper's own Java client (3.8, from the Debian
// package), pipelined through its async API with at most `window` requests outstanding, against
// the same server. Run as a single-file program:
//   java -cp /usr/share/java/zookeeper.jar ZkBench.java <connect> <get|set> <ops> <window> <path> <bytes>
// Prints `OPS <operations per second>` after a warm-up of a tenth of the ops (JIT).
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

public class ZkBench {
  public static void main(String[] args) throws Exception {
    String connect = args[0];
    String op = args[1];
    int ops = Integer.parseInt(args[2]);
    int window = Integer.parseInt(args[3]);
    String path = args[4];
    byte[] data = new byte[Integer.parseInt(args[5])];
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(connect, 30000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    });
    connected.await();
    run(zk, op, Math.max(1, ops / 10), window, path, data);
    long start = System.nanoTime();
    run(zk, op, ops, window, path, data);
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.println("OPS " + (ops / seconds));
    zk.close();
  }

  static void run(ZooKeeper zk, String op, int ops, int window, String path, byte[] data) throws Exception {
    Semaphore slots = new Semaphore(window);
    CountDownLatch done = new CountDownLatch(ops);
    for (int i = 0; i < ops; i++) {
      slots.acquire();
      if (op.equals("get")) {
        zk.getData(path, false, (rc, p, ctx, d, s) -> { check(rc); slots.release(); done.countDown(); }, null);
      } else {
        zk.setData(path, data, -1, (rc, p, ctx, s) -> { check(rc); slots.release(); done.countDown(); }, null);
      }
    }
    done.await();
  }

  static void check(int rc) {
    if (rc != 0) throw new IllegalStateException("ZooKeeper error " + rc);
  }
}
