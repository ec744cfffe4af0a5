//! The catalogue, entry by entry: every bundled rule names its library and
//! ecosystems, and has a case here: a small file written as the library's
//! documentation shows it, whose lock the rule finds (its finding names the
//! rule); for a kind that hands out a token, a fenced variant whose write
//! checks it; and a decoy (the same calls on something that is not the
//! library's lock, or the library's words in prose) that gives nothing.
//!
//! A case's lock line says what it plants, as the fixture trees do:
//! `audit: KIND fenced=yes|no|unknown`.

use std::collections::BTreeSet;
use std::path::Path;

use fencesim::audit::{audit_source, Language, Rules};

/// One catalogue entry's files: its rule, the file name (its language),
/// the positive, the fenced variant (when its kind hands out a token) and
/// the decoy.
struct Case {
    rule: &'static str,
    file: &'static str,
    positive: &'static str,
    fenced: Option<&'static str>,
    decoy: &'static str,
}

const CASES: &[Case] = &[
    // Go.
    Case {
        rule: "redlock-client",
        file: "jobs.go",
        positive: r#"package jobs

import (
	"database/sql"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
)

func Run(pool *goredis.Pool, db *sql.DB) error {
	rs := redsync.New(pool)
	m := rs.NewMutex("job") // audit: redlock fenced=no
	if err := m.Lock(); err != nil {
		return err
	}
	defer m.Unlock()
	_, err := db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

import "sync"

func Run(locks *Registry, db *sql.DB) {
	m := locks.NewMutex("job")
	var mu sync.Mutex
	mu.Lock()
	defer mu.Unlock()
	m.Lock()
	db.Exec("UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "redis-setnx",
        file: "jobs.go",
        positive: r#"package jobs

import "github.com/redis/go-redis/v9"

func Run(ctx context.Context, rdb *redis.Client, db *sql.DB) error {
	ok, err := rdb.SetNX(ctx, "lock:job", "worker-1", 30*time.Second).Result() // audit: redis_set_nx fenced=no
	if err != nil || !ok {
		return err
	}
	_, err = db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

import "log"

func Run(db *sql.DB) {
	// SetNX(ctx, "lock:job", …) is how the other service does it.
	log.Printf("SetNX(lock:job) was refused")
	db.Exec("UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "bsm-redislock",
        file: "jobs.go",
        positive: r#"package jobs

import "github.com/bsm/redislock"

func Run(ctx context.Context, rdb *redis.Client, db *sql.DB) error {
	locker := redislock.New(rdb)
	lock, err := locker.Obtain(ctx, "job", 10*time.Second, nil) // audit: redis_set_nx fenced=no
	if err != nil {
		return err
	}
	defer lock.Release(ctx)
	_, err = db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

func Run(ctx context.Context, pool *Pool, db *sql.DB) error {
	conn, err := pool.Obtain(ctx, "job")
	if err != nil {
		return err
	}
	_, err = conn.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "etcd-mutex",
        file: "jobs.go",
        positive: r#"package jobs

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func Run(ctx context.Context, s *concurrency.Session, db *sql.DB) error {
	m := concurrency.NewMutex(s, "/locks/job") // audit: etcd_lock fenced=no
	if err := m.Lock(ctx); err != nil {
		return err
	}
	defer m.Unlock(ctx)
	_, err := db.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package jobs

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func Run(ctx context.Context, cli *clientv3.Client, s *concurrency.Session) error {
	m := concurrency.NewMutex(s, "/locks/job") // audit: etcd_lock fenced=yes
	if err := m.Lock(ctx); err != nil {
		return err
	}
	defer m.Unlock(ctx)
	_, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(m.Key()), "=", m.Header().Revision)).
		Then(clientv3.OpPut("/jobs/1", "done")).
		Commit()
	return err
}
"#,
        ),
        decoy: r#"package jobs

import "sync"

func Run(db *sql.DB) {
	var mu sync.Mutex
	mu.Lock()
	defer mu.Unlock()
	db.Exec("UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "etcd-mutex",
        file: "leader.go",
        positive: r#"package leader

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func Lead(ctx context.Context, s *concurrency.Session, db *sql.DB) error {
	e := concurrency.NewElection(s, "/election/reports") // audit: etcd_lock fenced=no
	if err := e.Campaign(ctx, "worker-1"); err != nil {
		return err
	}
	defer e.Resign(ctx)
	_, err := db.ExecContext(ctx, "UPDATE reports SET owner = 'worker-1' WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package leader

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func Lead(ctx context.Context, cli *clientv3.Client, s *concurrency.Session) error {
	e := concurrency.NewElection(s, "/election/reports") // audit: etcd_lock fenced=yes
	if err := e.Campaign(ctx, "worker-1"); err != nil {
		return err
	}
	_, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", e.Rev())).
		Then(clientv3.OpPut("/reports/owner", "worker-1")).
		Commit()
	return err
}
"#,
        ),
        decoy: r#"package leader

func Lead(ctx context.Context, db *sql.DB) error {
	e := NewElection("reports")
	_, err := db.ExecContext(ctx, "UPDATE reports SET owner = 'worker-1' WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "etcd-campaign",
        file: "leader.go",
        positive: r#"package leader

import "go.etcd.io/etcd/client/v3/concurrency"

// Lead is handed the election its caller made.
func Lead(ctx context.Context, e *concurrency.Election, db *sql.DB) error {
	if err := e.Campaign(ctx, "worker-1"); err != nil { // audit: etcd_lock fenced=no
		return err
	}
	_, err := db.ExecContext(ctx, "UPDATE reports SET owner = 'worker-1' WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package leader

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

type Leader struct {
	cli      *clientv3.Client
	election *concurrency.Election
}

func (l *Leader) Lead(ctx context.Context) error {
	if err := l.election.Campaign(ctx, "worker-1"); err != nil { // audit: etcd_lock fenced=yes
		return err
	}
	_, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(l.election.Key()), "=", l.election.Rev())).
		Then(clientv3.OpPut("/reports/owner", "worker-1")).
		Commit()
	return err
}
"#,
        ),
        decoy: r#"package marketing

func Launch(ctx context.Context, c *Mailer, db *sql.DB) error {
	if err := c.Campaign(ctx, "spring-sale"); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, "UPDATE campaigns SET sent = true WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "kubernetes-elector",
        file: "main.go",
        positive: r#"package main

import "k8s.io/client-go/tools/leaderelection"

func run(ctx context.Context, lock *resourcelock.LeaseLock, db *sql.DB) {
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{ // audit: kubernetes_lease fenced=no
		Lock:          lock,
		LeaseDuration: 15 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				db.ExecContext(ctx, "UPDATE reports SET owner = 'me' WHERE id = 1")
			},
		},
	})
}
"#,
        fenced: Some(
            r#"package main

import "k8s.io/client-go/tools/leaderelection"

func run(ctx context.Context, lock *resourcelock.LeaseLock, db *sql.DB) {
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{ // audit: kubernetes_lease fenced=yes
		Lock: lock,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				db.ExecContext(ctx, "UPDATE reports SET owner = 'me' WHERE id = 1 AND lease_version < $1", version(lock))
			},
		},
	})
}
"#,
        ),
        decoy: r#"package main

// RunOrDie runs the job and exits on its error.
func RunOrDie(ctx context.Context, job func(context.Context) error) {
	if err := job(ctx); err != nil {
		panic(err)
	}
}

func main() {
	RunOrDie(context.Background(), work)
}
"#,
    },
    Case {
        rule: "controller-runtime-manager",
        file: "main.go",
        positive: r#"package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

func main() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{ // audit: kubernetes_lease fenced=no
		LeaderElection:   true,
		LeaderElectionID: "reports.example.com",
	})
	if err != nil {
		panic(err)
	}
	mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		_, err := db.ExecContext(ctx, "UPDATE reports SET owner = 'me' WHERE id = 1")
		return err
	}))
	mgr.Start(ctrl.SetupSignalHandler())
}
"#,
        fenced: Some(
            r#"package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

func main() {
	opts := ctrl.Options{LeaderElection: enableLeaderElection, LeaderElectionID: "reports"} // audit: kubernetes_lease fenced=yes
	mgr, _ := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		_, err := db.ExecContext(ctx, "UPDATE reports SET owner = 'me' WHERE id = 1 AND lease_version < $1", leaseVersion(ctx))
		return err
	}))
	mgr.Start(ctrl.SetupSignalHandler())
}
"#,
        ),
        decoy: r#"package main

import ctrl "sigs.k8s.io/controller-runtime"

func main() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: scheme})
	if err != nil {
		panic(err)
	}
	mgr.Start(ctrl.SetupSignalHandler())
}
"#,
    },
    Case {
        rule: "kubernetes-lease-lock",
        file: "lease.go",
        positive: r#"package lease

import "k8s.io/client-go/tools/leaderelection/resourcelock"

func newLock(client kubernetes.Interface, id string) resourcelock.Interface {
	return &resourcelock.LeaseLock{ // audit: kubernetes_lease fenced=unknown
		LeaseMeta:  metav1.ObjectMeta{Name: "reports", Namespace: "default"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
}
"#,
        fenced: Some(
            r#"package lease

import "k8s.io/client-go/tools/leaderelection/resourcelock"

func publish(ctx context.Context, client kubernetes.Interface, db *sql.DB, id string) error {
	lock := &resourcelock.LeaseLock{ // audit: kubernetes_lease fenced=yes
		LeaseMeta: metav1.ObjectMeta{Name: "reports", Namespace: "default"},
		Client:    client.CoordinationV1(),
	}
	_, err := db.ExecContext(ctx, "UPDATE reports SET owner = $1 WHERE id = 1 AND lease_version < $2", id, version(lock))
	return err
}
"#,
        ),
        decoy: r#"package lease

// A LeaseLock in a comment, and a struct of the same name of our own.
type LeaseLock struct{ until time.Time }

func hold() LeaseLock { return LeaseLock{until: time.Now()} }
"#,
    },
    Case {
        rule: "go-zookeeper-lock",
        file: "jobs.go",
        positive: r#"package jobs

import "github.com/go-zookeeper/zk"

func Run(conn *zk.Conn, db *sql.DB) error {
	l := zk.NewLock(conn, "/locks/job", zk.WorldACL(zk.PermAll)) // audit: zookeeper_lock fenced=no
	if err := l.Lock(); err != nil {
		return err
	}
	defer l.Unlock()
	_, err := db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

import "github.com/nightlyone/lockfile"

func Run(db *sql.DB) error {
	l, _ := lockfile.NewLock("/tmp/job.lock")
	if err := l.TryLock(); err != nil {
		return err
	}
	_, err := db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "consul-lock",
        file: "leader.go",
        positive: r#"package leader

import "github.com/hashicorp/consul/api"

func Lead(client *api.Client, db *sql.DB) error {
	lock, err := client.LockOpts(&api.LockOptions{Key: "service/reports/leader"}) // audit: consul_lock fenced=no
	if err != nil {
		return err
	}
	if _, err := lock.Lock(nil); err != nil {
		return err
	}
	defer lock.Unlock()
	_, err = db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package leader

import "github.com/hashicorp/consul/api"

func Lead(client *api.Client, db *sql.DB, index uint64) error {
	lock, err := client.LockKey("service/reports/leader") // audit: consul_lock fenced=yes
	if err != nil {
		return err
	}
	if _, err := lock.Lock(nil); err != nil {
		return err
	}
	_, err = db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1 AND fence_token < $1", index)
	return err
}
"#,
        ),
        decoy: r#"package leader

import "sync"

type Guard struct{ mu sync.Mutex }

func (g *Guard) Lead(db *sql.DB) {
	g.mu.Lock()
	defer g.mu.Unlock()
	db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1")
}
"#,
    },
    Case {
        rule: "consul-kv-acquire",
        file: "leader.go",
        positive: r#"package leader

import "github.com/hashicorp/consul/api"

func Lead(client *api.Client, session string, db *sql.DB) error {
	kv := client.KV()
	ok, _, err := kv.Acquire(&api.KVPair{Key: "service/reports/leader", Session: session}, nil) // audit: consul_lock fenced=no
	if err != nil || !ok {
		return err
	}
	_, err = db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package leader

import "github.com/hashicorp/consul/api"

func Lead(client *api.Client, session string, db *sql.DB, index uint64) error {
	ok, _, err := client.KV().Acquire(&api.KVPair{Key: "service/reports/leader", Session: session}, nil) // audit: consul_lock fenced=yes
	if err != nil || !ok {
		return err
	}
	_, err = db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1 AND fence_token < $1", index)
	return err
}
"#,
        ),
        decoy: r#"package pool

func Take(p *Pool, db *sql.DB) error {
	conn, err := p.Acquire(context.Background())
	if err != nil {
		return err
	}
	_, err = conn.Exec("UPDATE reports SET owner = 'me' WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "dynamodb-lock",
        file: "jobs.go",
        positive: r#"package jobs

import "cirello.io/dynamolock/v2"

func Run(c *dynamolock.Client, db *sql.DB) error {
	lock, err := c.AcquireLock("job", dynamolock.WithRefreshPeriod(time.Second)) // audit: dynamodb_lock fenced=no
	if err != nil {
		return err
	}
	defer c.ReleaseLock(lock)
	_, err = db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package jobs

import "cirello.io/dynamolock/v2"

func Run(c *dynamolock.Client, db *sql.DB) error {
	lock, err := c.AcquireLockWithContext(ctx, "job") // audit: dynamodb_lock fenced=yes
	if err != nil {
		return err
	}
	_, err = db.Exec("UPDATE jobs SET done = true WHERE id = 1 AND fence_token = $1", lock.RVN())
	return err
}
"#,
        ),
        decoy: r#"package jobs

func Run(db *sql.DB, sem *Semaphore) error {
	if err := sem.AcquireLock(); err != nil {
		return err
	}
	_, err := db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
    },
    // Java and Kotlin.
    Case {
        rule: "redisson-lock",
        file: "Job.java",
        positive: r#"import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

class Job {
    private final RedissonClient redisson;

    Job(RedissonClient redisson) {
        this.redisson = redisson;
    }

    void run() {
        RLock lock = redisson.getLock("job"); // audit: redisson_lock fenced=no
        lock.lock();
        try {
            jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
        } finally {
            lock.unlock();
        }
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.locks.ReentrantLock;

class Job {
    private final LockService locks;

    void run() {
        java.util.concurrent.locks.Lock lock = locks.getLock("job");
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "redisson-fenced-lock",
        file: "Job.java",
        positive: r#"import org.redisson.api.RFencedLock;

class Job {
    void run(org.redisson.api.RedissonClient redisson) {
        RFencedLock lock = redisson.getFencedLock("job"); // audit: redisson_fenced_lock fenced=no
        Long token = lock.lockAndGetToken();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import org.redisson.api.RFencedLock;

class Job {
    void run(org.redisson.api.RedissonClient redisson) {
        RFencedLock lock = redisson.getFencedLock("job"); // audit: redisson_fenced_lock fenced=yes
        Long token = lock.lockAndGetToken();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token < ?", token);
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Registry registry) {
        Object lock = registry.getFencedLock("job");
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "redisson-fenced-token",
        file: "Job.java",
        positive: r#"import org.redisson.api.RFencedLock;

class Job {
    private final RFencedLock lock;

    void run() {
        Long token = lock.lockAndGetToken(); // audit: redisson_fenced_lock fenced=no
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import org.redisson.api.RFencedLock;

class Job {
    void run(RFencedLock lock) {
        Long token = lock.tryLockAndGetToken(10, 60, TimeUnit.SECONDS); // audit: redisson_fenced_lock fenced=yes
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token < ?", token);
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Tokens tokens) {
        Long token = tokens.lockAndGetToken();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "redisson-redlock",
        file: "Job.java",
        positive: r#"import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;

class Job {
    void run(RLock a, RLock b, RLock c) {
        RedissonRedLock lock = new RedissonRedLock(a, b, c); // audit: redlock fenced=no
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"class Job {
    // new RedissonRedLock(a, b, c) would need three Redis masters.
    void run() {
        String note = "new RedissonRedLock(a, b, c)";
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "redisson-redlock-get",
        file: "Job.java",
        positive: r#"import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

class Job {
    void run(RedissonClient redisson, RLock a, RLock b) {
        RLock lock = redisson.getMultiLock(a, b); // audit: redlock fenced=no
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"class Job {
    void run(Locks locks) {
        Object lock = locks.getMultiLock("a", "b");
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "curator-recipe",
        file: "Job.java",
        positive: r#"import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;

class Job {
    void run(CuratorFramework client) throws Exception {
        InterProcessSemaphoreMutex mutex = new InterProcessSemaphoreMutex(client, "/locks/job"); // audit: zookeeper_lock fenced=no
        mutex.acquire();
        try {
            jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
        } finally {
            mutex.release();
        }
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.Semaphore;

class Job {
    void run() throws Exception {
        Semaphore mutex = new Semaphore(1);
        mutex.acquire();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "curator-recipe",
        file: "Leader.java",
        positive: r#"import org.apache.curator.framework.recipes.leader.LeaderLatch;

class Leader {
    void run(CuratorFramework client) throws Exception {
        LeaderLatch latch = new LeaderLatch(client, "/leader/reports"); // audit: zookeeper_lock fenced=no
        latch.start();
        latch.await();
        jdbc.update("UPDATE reports SET owner = 'me' WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.CountDownLatch;

class Leader {
    void run() throws Exception {
        CountDownLatch latch = new CountDownLatch(1);
        latch.await();
        jdbc.update("UPDATE reports SET owner = 'me' WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "shedlock",
        file: "Report.java",
        positive: r#"import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;

class Report {
    @Scheduled(cron = "0 0 * * * *")
    @SchedulerLock(name = "report", lockAtMostFor = "10m") // audit: shedlock fenced=no
    public void publish() {
        jdbc.update("UPDATE reports SET published = true WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"class Report {
    @Scheduled(cron = "0 0 * * * *")
    public void publish() {
        jdbc.update("UPDATE reports SET published = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "shedlock-executor",
        file: "Report.java",
        positive: r#"import net.javacrumbs.shedlock.core.LockingTaskExecutor;

class Report {
    private final LockingTaskExecutor executor;

    public void publish() {
        executor.executeWithLock(() -> jdbc.update("UPDATE reports SET published = true WHERE id = 1"), // audit: shedlock fenced=no
            new LockConfiguration(Instant.now(), "report", Duration.ofMinutes(10), Duration.ZERO));
    }
}
"#,
        fenced: None,
        decoy: r#"class Report {
    private final TaskExecutor executor;

    public void publish() {
        executor.execute(() -> jdbc.update("UPDATE reports SET published = true WHERE id = 1"));
    }
}
"#,
    },
    Case {
        rule: "spring-lock-registry",
        file: "Report.java",
        positive: r#"import java.util.concurrent.locks.Lock;
import org.springframework.integration.support.locks.LockRegistry;

@Service
class Report {
    private final LockRegistry lockRegistry;

    Report(LockRegistry lockRegistry) {
        this.lockRegistry = lockRegistry;
    }

    public void publish(String day) {
        Lock lock = this.lockRegistry.obtain("report:" + day); // audit: spring_lock_registry fenced=no
        if (lock.tryLock()) {
            try {
                jdbc.update("UPDATE reports SET published = true WHERE day = ?", day);
            } finally {
                lock.unlock();
            }
        }
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.locks.Lock;

class Report {
    private final ConnectionPool pool;

    public void publish(String day) {
        Connection c = pool.obtain(day);
        jdbc.update("UPDATE reports SET published = true WHERE day = ?", day);
    }
}
"#,
    },
    Case {
        rule: "hazelcast-cp-lock",
        file: "Job.java",
        positive: r#"import com.hazelcast.cp.lock.FencedLock;

class Job {
    void run(HazelcastInstance hz) {
        FencedLock lock = hz.getCPSubsystem().getLock("job"); // audit: hazelcast_fenced_lock fenced=no
        long fence = lock.lockAndGetFence();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import com.hazelcast.cp.lock.FencedLock;

class Job {
    void run(HazelcastInstance hz) {
        FencedLock lock = hz.getCPSubsystem().getLock("job"); // audit: hazelcast_fenced_lock fenced=yes
        long fence = lock.lockAndGetFence();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token < ?", fence);
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Subsystems s) {
        Object lock = s.getCPSubsystem();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "hazelcast-fence",
        file: "Job.java",
        positive: r#"import com.hazelcast.cp.lock.FencedLock;

class Job {
    private final FencedLock lock;

    void run() {
        long fence = lock.lockAndGetFence(); // audit: hazelcast_fenced_lock fenced=no
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import com.hazelcast.cp.lock.FencedLock;

class Job {
    void run(FencedLock lock) {
        long fence = lock.tryLockAndGetFence(); // audit: hazelcast_fenced_lock fenced=yes
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token < ?", fence);
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Fences fences) {
        long fence = fences.lockAndGetFence();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "hazelcast-lock",
        file: "Job.java",
        positive: r#"import com.hazelcast.core.HazelcastInstance;

class Job {
    void run(HazelcastInstance hz) {
        ILock lock = hz.getLock("job"); // audit: hazelcast_lock fenced=no
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"class Job {
    void run(java.util.concurrent.locks.ReadWriteLock rw) {
        java.util.concurrent.locks.Lock lock = rw.writeLock();
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "dynamodb-lock",
        file: "Job.java",
        positive: r#"import com.amazonaws.services.dynamodbv2.AmazonDynamoDBLockClient;

class Job {
    void run(AmazonDynamoDBLockClient client) throws Exception {
        Optional<LockItem> lock = client.tryAcquireLock(AcquireLockOptions.builder("job").build()); // audit: dynamodb_lock fenced=no
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import com.amazonaws.services.dynamodbv2.AmazonDynamoDBLockClient;

class Job {
    void run(AmazonDynamoDBLockClient client) throws Exception {
        LockItem lock = client.acquireLock(AcquireLockOptions.builder("job").build()); // audit: dynamodb_lock fenced=yes
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token = ?", lock.getRecordVersionNumber());
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Semaphore s) throws Exception {
        s.tryAcquire();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "consul-lock",
        file: "Leader.java",
        positive: r#"import com.ecwid.consul.v1.kv.model.PutParams;

class Leader {
    void run(ConsulClient consul, String session) {
        PutParams params = new PutParams();
        params.setAcquireSession(session); // audit: consul_lock fenced=no
        consul.setKVValue("service/reports/leader", "me", params);
        jdbc.update("UPDATE reports SET owner = 'me' WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import com.ecwid.consul.v1.kv.model.PutParams;

class Leader {
    void run(ConsulClient consul, String session, long index) {
        PutParams params = new PutParams();
        params.setAcquireSession(session); // audit: consul_lock fenced=yes
        consul.setKVValue("service/reports/leader", "me", params);
        jdbc.update("UPDATE reports SET owner = 'me' WHERE id = 1 AND fence_token < ?", index);
    }
}
"#,
        ),
        decoy: r#"class Leader {
    void run(Session session) {
        session.setAttribute("leader", "me");
        jdbc.update("UPDATE reports SET owner = 'me' WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "quartz-disallow-concurrent",
        file: "ReportJob.java",
        positive: r#"import org.quartz.DisallowConcurrentExecution;
import org.quartz.Job;

@DisallowConcurrentExecution // audit: quartz_nonconcurrent_job fenced=no
public class ReportJob implements Job {
    public void execute(JobExecutionContext context) {
        jdbc.update("UPDATE reports SET published = true WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"import org.quartz.Job;

// @DisallowConcurrentExecution is left off: this job may overlap.
public class ReportJob implements Job {
    public void execute(JobExecutionContext context) {
        jdbc.update("UPDATE reports SET published = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "etcd-lock-client",
        file: "Job.java",
        positive: r#"import io.etcd.jetcd.Client;

class Job {
    void run(Client client, long leaseId) throws Exception {
        Lock lockClient = client.getLockClient(); // audit: etcd_lock fenced=no
        LockResponse held = lockClient.lock(ByteSequence.from("job", UTF_8), leaseId).get();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import io.etcd.jetcd.Client;

class Job {
    void run(Client client, long leaseId) throws Exception {
        Lock lockClient = client.getLockClient(); // audit: etcd_lock fenced=yes
        LockResponse held = lockClient.lock(ByteSequence.from("job", UTF_8), leaseId).get();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND revision < ?", held.getHeader().getRevision());
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Client client) throws Exception {
        Kv kv = client.getKVClient();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "etcd-lease-client",
        file: "Job.java",
        positive: r#"import io.etcd.jetcd.Client;

class Job {
    void run(Client client) throws Exception {
        Lease leases = client.getLeaseClient(); // audit: etcd_lease fenced=no
        long id = leases.grant(30).get().getID();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import io.etcd.jetcd.Client;

class Job {
    void run(Client client, long revision) throws Exception {
        Lease leases = client.getLeaseClient(); // audit: etcd_lease fenced=yes
        long id = leases.grant(30).get().getID();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND revision < ?", revision);
    }
}
"#,
        ),
        decoy: r#"class Job {
    void run(Leases leases) throws Exception {
        leases.renew("flat-4");
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    // Python.
    Case {
        rule: "redis-lock",
        file: "jobs.py",
        positive: r#"import redis

r = redis.Redis()


def run(db):
    with r.lock("job", timeout=30):  # audit: redis_set_nx fenced=no
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"import threading

lock = threading.Lock()


def run(db):
    with lock:
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "redis-py-lock",
        file: "jobs.py",
        positive: r#"import redis
from redis.lock import Lock


def run(r, db, job):
    lock = Lock(r, key_of(job), timeout=30)  # audit: redis_set_nx fenced=no
    if lock.acquire(blocking=False):
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"import redis
import threading


def run(r, db):
    lock = threading.Lock()
    with lock:
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "redis-lock-on-redis",
        file: "jobs.py",
        positive: r#"from app import redis


def run(db):
    lock = redis.lock("job", timeout=30)  # audit: redis_set_nx fenced=no
    if lock.acquire(blocking=False):
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"from app import redis


def run(db, key):
    redis.lock  # the method, not a call
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "python-redis-lock",
        file: "jobs.py",
        positive: r#"import redis_lock
from redis import StrictRedis

conn = StrictRedis()


def run(db):
    with redis_lock.Lock(conn, "job", expire=60):  # audit: redis_set_nx fenced=no
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"import filelock


def run(db):
    with filelock.FileLock("job.lock"):
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "pottery-redlock",
        file: "jobs.py",
        positive: r#"from pottery import Redlock
from redis import Redis

redis = Redis()


def run(db):
    lock = Redlock(key="job", masters={redis}, auto_release_time=10)  # audit: redlock fenced=no
    with lock:
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"from pottery import RedisDict


def run(db, redis):
    cache = RedisDict(redis=redis, key="jobs")
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "redlock-client",
        file: "jobs.py",
        positive: r#"from aioredlock import Aioredlock

lock_manager = Aioredlock([{"host": "localhost", "port": 6379}])


async def run(db):
    lock = await lock_manager.lock("job", lock_timeout=10)  # audit: redlock fenced=no
    await db.execute("UPDATE jobs SET done = true WHERE id = 1")
    await lock_manager.unlock(lock)
"#,
        fenced: None,
        decoy: r#"import asyncio

guard = asyncio.Lock()


async def run(db):
    async with guard:
        await db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "sherlock",
        file: "jobs.py",
        positive: r#"import sherlock

sherlock.configure(backend=sherlock.backends.REDIS, expire=30)


def run(db):
    lock = sherlock.Lock("job")  # audit: sherlock_lock fenced=no
    lock.acquire()
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
    lock.release()
"#,
        fenced: None,
        decoy: r#"import threading


def run(db, detective):
    detective.Lock("job")
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "kazoo-lock",
        file: "jobs.py",
        positive: r#"from kazoo.client import KazooClient

zk = KazooClient(hosts="127.0.0.1:2181")


def run(db):
    lock = zk.Lock("/locks/job", "worker-1")  # audit: zookeeper_lock fenced=no
    with lock:
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"from kazoo.client import KazooClient
import threading

zk = KazooClient(hosts="127.0.0.1:2181")


def run(db):
    with threading.Lock():
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "kazoo-lock",
        file: "leader.py",
        positive: r#"from kazoo.client import KazooClient

zk = KazooClient(hosts="127.0.0.1:2181")


def lead(db):
    election = zk.Election("/election/reports", "worker-1")  # audit: zookeeper_lock fenced=no
    election.run(publish, db)


def publish(db):
    db.execute("UPDATE reports SET owner = 'me' WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"def lead(db, ballots):
    ballots.Election("reports")
    db.execute("UPDATE reports SET owner = 'me' WHERE id = 1")
"#,
    },
    Case {
        rule: "etcd-lock",
        file: "jobs.py",
        positive: r#"import etcd3

etcd = etcd3.client()


def run(db):
    with etcd.lock("job", ttl=30):  # audit: etcd_lock fenced=no
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: Some(
            r#"import etcd3

etcd = etcd3.client()


def run(version):
    with etcd.lock("job", ttl=30):  # audit: etcd_lock fenced=yes
        etcd.transaction(
            compare=[etcd.transactions.version("/jobs/1") == version],
            success=[etcd.transactions.put("/jobs/1", "done")],
            failure=[],
        )
"#,
        ),
        decoy: r#"import etcd3
import threading

etcd = etcd3.client()
local = threading.Lock()


def run(db):
    with local:
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "etcd-grant",
        file: "jobs.py",
        positive: r#"import etcd3

etcd = etcd3.client()


def run(db):
    lease = etcd.lease(30)  # audit: etcd_lease fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: Some(
            r#"import etcd3

etcd = etcd3.client()


def run(db, revision):
    lease = etcd.lease(30)  # audit: etcd_lease fenced=yes
    db.execute("UPDATE jobs SET done = true WHERE id = 1 AND revision < %s", (revision,))
"#,
        ),
        decoy: r#"def run(db, flats):
    flats.lease(30)
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "tooz-lock",
        file: "jobs.py",
        positive: r#"from tooz import coordination

coordinator = coordination.get_coordinator("redis://localhost:6379", b"worker-1")


def run(db):
    lock = coordinator.get_lock(b"job")  # audit: tooz_lock fenced=no
    with lock:
        db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"def run(db, registry):
    lock = registry.get_lock("job")
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "dynamodb-lock",
        file: "jobs.py",
        positive: r#"from python_dynamodb_lock.python_dynamodb_lock import DynamoDBLockClient


def run(lock_client, db):
    lock = lock_client.acquire_lock("job")  # audit: dynamodb_lock fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
    lock.release()
"#,
        fenced: Some(
            r#"from python_dynamodb_lock.python_dynamodb_lock import DynamoDBLockClient


def run(lock_client, db):
    lock = lock_client.acquire_lock("job")  # audit: dynamodb_lock fenced=yes
    db.execute("UPDATE jobs SET done = true WHERE id = 1 AND fence_token = %s", (lock.record_version_number,))
"#,
        ),
        decoy: r#"def run(pool, db):
    conn = pool.acquire()
    db.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "consul-put-acquire",
        file: "leader.py",
        positive: r#"import consul

c = consul.Consul()


def lead(db, session_id):
    if c.kv.put("service/reports/leader", "me", acquire=session_id):  # audit: consul_lock fenced=no
        db.execute("UPDATE reports SET owner = 'me' WHERE id = 1")
"#,
        fenced: Some(
            r#"import consul

c = consul.Consul()


def lead(db, session_id, index):
    if c.kv.put("service/reports/leader", "me", acquire=session_id):  # audit: consul_lock fenced=yes
        db.execute("UPDATE reports SET owner = 'me' WHERE id = 1 AND fence_token < %s", (index,))
"#,
        ),
        decoy: r#"import consul

c = consul.Consul()


def lead(db):
    c.kv.put("service/reports/owner", "me")
"#,
    },
    // JavaScript and TypeScript.
    Case {
        rule: "redlock-client",
        file: "jobs.ts",
        positive: r#"import Redlock from "redlock";
import Redis from "ioredis";

const redlock = new Redlock([new Redis()], { retryCount: 3 });

export async function run(db: Pool): Promise<void> {
  await redlock.using(["job"], 5000, async (signal) => { // audit: redlock fenced=no
    await db.query("UPDATE jobs SET done = true WHERE id = 1");
  });
}
"#,
        fenced: None,
        decoy: r#"import { Mutex } from "async-mutex";

const mutex = new Mutex();

export async function run(db: Pool): Promise<void> {
  await mutex.runExclusive(async () => {
    await db.query("UPDATE jobs SET done = true WHERE id = 1");
  });
}
"#,
    },
    Case {
        rule: "redlock-client",
        file: "jobs.js",
        positive: r#"const Redlock = require("redlock");

const redlock = new Redlock([client]);

async function run(db) {
  const lock = await redlock.lock("locks:job", 1000); // audit: redlock fenced=no
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
  await lock.unlock();
}
"#,
        fenced: None,
        decoy: r#"async function run(db, door) {
  await door.lock("front", 1000);
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
}
"#,
    },
    Case {
        rule: "redis-semaphore",
        file: "jobs.ts",
        positive: r#"import { Mutex } from "redis-semaphore";
import Redis from "ioredis";

const redisClient = new Redis();

export async function run(db: Pool): Promise<void> {
  const mutex = new Mutex(redisClient, "job"); // audit: redis_set_nx fenced=no
  await mutex.acquire();
  try {
    await db.query("UPDATE jobs SET done = true WHERE id = 1");
  } finally {
    await mutex.release();
  }
}
"#,
        fenced: None,
        decoy: r#"import { Mutex } from "async-mutex";

export async function run(db: Pool): Promise<void> {
  const mutex = new Mutex();
  const release = await mutex.acquire();
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
  release();
}
"#,
    },
    Case {
        rule: "redis-semaphore-redlock",
        file: "jobs.ts",
        positive: r#"import { RedlockMutex } from "redis-semaphore";

export async function run(db: Pool, a: Redis, b: Redis, c: Redis): Promise<void> {
  const mutex = new RedlockMutex([a, b, c], "job"); // audit: redlock fenced=no
  await mutex.acquire();
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
}
"#,
        fenced: None,
        decoy: r#"import { Semaphore } from "async-mutex";

export async function run(db: Pool): Promise<void> {
  const semaphore = new Semaphore(3);
  await semaphore.acquire();
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
}
"#,
    },
    Case {
        rule: "warlock",
        file: "jobs.js",
        positive: r#"const warlock = require("node-redis-warlock")(redis);

function run(db) {
  warlock.lock("job", 10000, (err, unlock) => { // audit: redis_set_nx fenced=no
    db.query("UPDATE jobs SET done = true WHERE id = 1", () => unlock());
  });
}
"#,
        fenced: None,
        decoy: r#"function run(db, vault) {
  vault.lock();
  db.query("UPDATE jobs SET done = true WHERE id = 1");
}
"#,
    },
    Case {
        rule: "redis-set-nx",
        file: "jobs.js",
        positive: r#"const Redis = require("ioredis");

const redis = new Redis();

async function run(db, id) {
  const ok = await redis.set("lock:job", id, "PX", 30000, "NX"); // audit: redis_set_nx fenced=no
  if (ok) {
    await db.query("UPDATE jobs SET done = true WHERE id = 1");
  }
}
"#,
        fenced: None,
        decoy: r#"const Redis = require("ioredis");

const redis = new Redis();

async function run(db, id) {
  await redis.set("last:job", id, "PX", 30000);
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
}
"#,
    },
    Case {
        rule: "redis-set-nx",
        file: "jobs.ts",
        positive: r#"import { createClient } from "redis";

const client = createClient();

export async function run(db: Pool, id: string): Promise<void> {
  if (await client.set("lock:job", id, { NX: true, PX: 30000 })) { // audit: redis_set_nx fenced=no
    await db.query("UPDATE jobs SET done = true WHERE id = 1");
  }
}
"#,
        fenced: None,
        decoy: r#"import { createClient } from "redis";

const client = createClient();

export async function run(db: Pool, id: string): Promise<void> {
  await client.set("last:job", id, { PX: 30000 });
  await db.query("UPDATE jobs SET done = true WHERE id = 1");
}
"#,
    },
    // Rust.
    Case {
        rule: "redlock-client",
        file: "jobs.rs",
        positive: r#"use rslock::LockManager;

async fn run(db: &Pool) {
    let rl = LockManager::new(vec!["redis://127.0.0.1:6379/"]);
    let lock = rl.lock(b"job", Duration::from_millis(1000)).await.unwrap(); // audit: redlock fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1").await.unwrap();
    rl.unlock(&lock).await;
}
"#,
        fenced: None,
        decoy: r#"use tokio::sync::Mutex;

async fn run(db: &Pool, m: &Mutex<()>) {
    let _guard = m.lock().await;
    db.execute("UPDATE jobs SET done = true WHERE id = 1").await.unwrap();
}
"#,
    },
    Case {
        rule: "redlock-client",
        file: "redlock.rs",
        positive: r#"use redlock::RedLock;

fn run(db: &Pool) {
    let rl = RedLock::new(vec!["redis://127.0.0.1:6380/"]);
    let lock = rl.lock("job".as_bytes(), 1000).unwrap(); // audit: redlock fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1").unwrap();
    rl.unlock(&lock);
}
"#,
        fenced: None,
        decoy: r#"use std::sync::Mutex;

fn run(db: &Pool, m: &Mutex<()>) {
    let _guard = m.lock().unwrap();
    db.execute("UPDATE jobs SET done = true WHERE id = 1").unwrap();
}
"#,
    },
    Case {
        rule: "redis-set-nx",
        file: "redis.rs",
        positive: r#"use redis::{Commands, ExistenceCheck, SetExpiry, SetOptions};

fn run(con: &mut redis::Connection, db: &Pool, id: &str) -> redis::RedisResult<()> {
    let opts = SetOptions::default()
        .conditional_set(ExistenceCheck::NX)
        .with_expiration(SetExpiry::PX(30000));
    let ok: bool = con.set_options("lock:job", id, opts)?; // audit: redis_set_nx fenced=no
    if ok {
        db.execute("UPDATE jobs SET done = true WHERE id = 1").unwrap();
    }
    Ok(())
}
"#,
        fenced: None,
        decoy: r#"use redis::{Commands, SetExpiry, SetOptions};

fn run(con: &mut redis::Connection, db: &Pool, id: &str) -> redis::RedisResult<()> {
    let opts = SetOptions::default().with_expiration(SetExpiry::PX(30000));
    let _: () = con.set_options("last:job", id, opts)?;
    db.execute("UPDATE jobs SET done = true WHERE id = 1").unwrap();
    Ok(())
}
"#,
    },
    Case {
        rule: "etcd-lock",
        file: "etcd.rs",
        positive: r#"use etcd_client::{Client, LockOptions};

async fn run(client: &mut Client, db: &Pool, lease: i64) -> Result<(), etcd_client::Error> {
    let held = client.lock("job", Some(LockOptions::new().with_lease(lease))).await?; // audit: etcd_lock fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1").await.unwrap();
    client.unlock(held.key()).await?;
    Ok(())
}
"#,
        fenced: Some(
            r#"use etcd_client::{Client, Compare, CompareOp, LockOptions, Txn, TxnOp};

async fn run(client: &mut Client, lease: i64) -> Result<(), etcd_client::Error> {
    let held = client.lock("job", Some(LockOptions::new().with_lease(lease))).await?; // audit: etcd_lock fenced=yes
    let rev = held.header().unwrap().revision();
    let txn = Txn::new()
        .when([Compare::create_revision(held.key(), CompareOp::Equal, rev)])
        .and_then([TxnOp::put("/jobs/1", "done", None)]);
    client.txn(txn).await?;
    Ok(())
}
"#,
        ),
        decoy: r#"use etcd_client::Client;
use std::sync::Mutex;

fn run(db: &Pool, m: &Mutex<()>) {
    let _guard = m.lock().unwrap();
    db.execute("UPDATE jobs SET done = true WHERE id = 1").unwrap();
}
"#,
    },
    Case {
        rule: "etcd-lease-client",
        file: "lease.rs",
        positive: r#"use etcd_client::Client;

async fn run(client: &mut Client, db: &Pool) -> Result<(), etcd_client::Error> {
    let lease = client.lease_grant(30, None).await?; // audit: etcd_lease fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1").await.unwrap();
    Ok(())
}
"#,
        fenced: Some(
            r#"use etcd_client::Client;

async fn run(client: &mut Client, db: &Pool, revision: i64) -> Result<(), etcd_client::Error> {
    let lease = client.lease_grant(30, None).await?; // audit: etcd_lease fenced=yes
    db.execute_with("UPDATE jobs SET done = true WHERE id = 1 AND revision < $1", revision).await.unwrap();
    Ok(())
}
"#,
        ),
        decoy: r#"// lease_grant(30, None) is how the etcd client takes a lease.
fn lease_grant(ttl: i64) -> i64 {
    ttl
}
"#,
    },
    Case {
        rule: "kubernetes-lease-lock-new",
        file: "leader.rs",
        positive: r#"use kube_leader_election::{LeaseLock, LeaseLockParams};

async fn lead(client: kube::Client) {
    let leadership = LeaseLock::new(client, "default", LeaseLockParams { // audit: kubernetes_lease fenced=unknown
        holder_id: "worker-1".into(),
        lease_name: "reports".into(),
        lease_ttl: Duration::from_secs(15),
    });
    leadership.try_acquire_or_renew().await.unwrap();
}
"#,
        fenced: Some(
            r#"use kube_leader_election::{LeaseLock, LeaseLockParams};

async fn lead(client: kube::Client, db: &Pool, version: i64) {
    let leadership = LeaseLock::new(client, "default", params()); // audit: kubernetes_lease fenced=yes
    db.execute_with("UPDATE reports SET owner = 'me' WHERE id = 1 AND lease_version < $1", version).await.unwrap();
}
"#,
        ),
        decoy: r#"struct LeaseLock;

impl LeaseLock {
    fn new() -> Self {
        LeaseLock
    }
}

fn lead() {
    let _l = LeaseLock::new();
}
"#,
    },
    // Clients and locks handed in, held in fields, injected: found by the
    // type they are declared with.
    Case {
        rule: "redlock-client",
        file: "worker.go",
        positive: r#"package jobs

import "github.com/go-redsync/redsync/v4"

// Worker is wired in main with the Redsync its pool made.
type Worker struct {
	rs *redsync.Redsync
	db *sql.DB
}

func (w *Worker) Run() error {
	m := w.rs.NewMutex("job") // audit: redlock fenced=no
	if err := m.Lock(); err != nil {
		return err
	}
	defer m.Unlock()
	_, err := w.db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

type Worker struct {
	locks *Registry
	db    *sql.DB
}

func (w *Worker) Run() {
	m := w.locks.NewMutex("job")
	m.Lock()
	w.db.Exec("UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "bsm-redislock",
        file: "worker.go",
        positive: r#"package jobs

import "github.com/bsm/redislock"

func Run(ctx context.Context, locker *redislock.Client, db *sql.DB) error {
	lock, err := locker.Obtain(ctx, "job", 10*time.Second, nil) // audit: redis_set_nx fenced=no
	if err != nil {
		return err
	}
	defer lock.Release(ctx)
	_, err = db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

import "github.com/bsm/redislock"

func Run(ctx context.Context, pool *Pool, db *sql.DB) error {
	conn, err := pool.Obtain(ctx, "job")
	if err != nil {
		return err
	}
	_, err = conn.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "etcd-mutex-typed",
        file: "worker.go",
        positive: r#"package jobs

import "go.etcd.io/etcd/client/v3/concurrency"

type Worker struct {
	mu *concurrency.Mutex
	db *sql.DB
}

func (w *Worker) Run(ctx context.Context) error {
	if err := w.mu.Lock(ctx); err != nil { // audit: etcd_lock fenced=no
		return err
	}
	defer w.mu.Unlock(ctx)
	_, err := w.db.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package jobs

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

func Run(ctx context.Context, cli *clientv3.Client, m *concurrency.Mutex) error {
	if err := m.Lock(ctx); err != nil { // audit: etcd_lock fenced=yes
		return err
	}
	_, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(m.Key()), "=", m.Header().Revision)).
		Then(clientv3.OpPut("/jobs/1", "done")).
		Commit()
	return err
}
"#,
        ),
        decoy: r#"package jobs

import (
	"sync"

	"go.etcd.io/etcd/client/v3/concurrency"
)

type Worker struct {
	mu sync.Mutex
	s  *concurrency.Session
	db *sql.DB
}

func (w *Worker) Run(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.db.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "go-zookeeper-lock-typed",
        file: "worker.go",
        positive: r#"package jobs

import "github.com/go-zookeeper/zk"

func Run(l *zk.Lock, db *sql.DB) error {
	if err := l.Lock(); err != nil { // audit: zookeeper_lock fenced=no
		return err
	}
	defer l.Unlock()
	_, err := db.Exec("UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: None,
        decoy: r#"package jobs

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

func Run(l *sync.Mutex, conn *zk.Conn, db *sql.DB) {
	l.Lock()
	defer l.Unlock()
	db.Exec("UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "consul-lock-typed",
        file: "worker.go",
        positive: r#"package jobs

import "github.com/hashicorp/consul/api"

type Leader struct {
	lock *api.Lock
	db   *sql.DB
}

func (l *Leader) Lead(stop <-chan struct{}) error {
	if _, err := l.lock.Lock(stop); err != nil { // audit: consul_lock fenced=no
		return err
	}
	defer l.lock.Unlock()
	_, err := l.db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package jobs

import "github.com/hashicorp/consul/api"

func Lead(lock *api.Lock, db *sql.DB, index uint64, stop <-chan struct{}) error {
	if _, err := lock.Lock(stop); err != nil { // audit: consul_lock fenced=yes
		return err
	}
	_, err := db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1 AND fence_token < $1", index)
	return err
}
"#,
        ),
        decoy: r#"package jobs

import (
	"sync"

	"github.com/hashicorp/consul/api"
)

type Leader struct {
	lock sync.Mutex
	kv   *api.KV
	db   *sql.DB
}

func (l *Leader) Lead() {
	l.lock.Lock()
	defer l.lock.Unlock()
	l.db.Exec("UPDATE reports SET owner = 'me' WHERE id = 1")
}
"#,
    },
    Case {
        rule: "redisson-fenced-lock-typed",
        file: "Job.java",
        positive: r#"import org.redisson.api.RFencedLock;

@Service
class Job {
    private final RFencedLock lock;

    Job(RFencedLock lock) {
        this.lock = lock;
    }

    void run() {
        lock.lock(); // audit: redisson_fenced_lock fenced=no
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import org.redisson.api.RFencedLock;

class Job {
    void run(RFencedLock lock) {
        lock.lock(); // audit: redisson_fenced_lock fenced=yes
        Long token = lock.getToken();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token < ?", token);
    }
}
"#,
        ),
        decoy: r#"import java.util.concurrent.locks.ReentrantLock;
import org.redisson.api.RedissonClient;

class Job {
    private final ReentrantLock lock = new ReentrantLock();

    void run() {
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "redisson-lock-typed",
        file: "Job.java",
        positive: r#"import org.redisson.api.RLock;

@Component
class Job {
    @Autowired
    private RLock lock;

    void run() throws InterruptedException {
        if (lock.tryLock(10, 60, TimeUnit.SECONDS)) { // audit: redisson_lock fenced=no
            jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
        }
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.locks.Lock;
import org.redisson.api.RedissonClient;

class Job {
    private Lock lock;

    void run() {
        if (lock.tryLock()) {
            jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
        }
    }
}
"#,
    },
    Case {
        rule: "hazelcast-fenced-lock-typed",
        file: "Job.java",
        positive: r#"import com.hazelcast.cp.lock.FencedLock;

class Job {
    void run(FencedLock lock) {
        lock.lock(); // audit: hazelcast_fenced_lock fenced=no
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: Some(
            r#"import com.hazelcast.cp.lock.FencedLock;

class Job {
    private final FencedLock lock;

    void run() {
        lock.lock(); // audit: hazelcast_fenced_lock fenced=yes
        long fence = lock.getFence();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1 AND fence_token < ?", fence);
    }
}
"#,
        ),
        decoy: r#"import com.hazelcast.core.HazelcastInstance;
import java.util.concurrent.locks.ReentrantLock;

class Job {
    void run(ReentrantLock lock) {
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "curator-recipe-typed",
        file: "Job.kt",
        positive: r#"import org.apache.curator.framework.recipes.locks.InterProcessMutex

class Job(private val mutex: InterProcessMutex, private val jdbc: JdbcTemplate) {
    fun run() {
        mutex.acquire() // audit: zookeeper_lock fenced=no
        try {
            jdbc.update("UPDATE jobs SET done = true WHERE id = 1")
        } finally {
            mutex.release()
        }
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.Semaphore

class Job(private val mutex: Semaphore, private val jdbc: JdbcTemplate) {
    fun run() {
        mutex.acquire()
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1")
    }
}
"#,
    },
    Case {
        rule: "redis-semaphore-typed",
        file: "job.ts",
        positive: r#"import { Mutex } from "redis-semaphore";

export class Job {
  constructor(private readonly mutex: Mutex, private readonly db: Pool) {}

  async run(): Promise<void> {
    await this.mutex.acquire(); // audit: redis_set_nx fenced=no
    await this.db.query("UPDATE jobs SET done = true WHERE id = 1");
  }
}
"#,
        fenced: None,
        decoy: r#"import { Mutex } from "async-mutex";

export class Job {
  constructor(private readonly mutex: Mutex, private readonly db: Pool) {}

  async run(): Promise<void> {
    await this.mutex.acquire();
    await this.db.query("UPDATE jobs SET done = true WHERE id = 1");
  }
}
"#,
    },
    // SQL, in SQL code and in query strings.
    // The transaction's lock guarding a write to another system: no token
    // reaches it. Its variant writes in the transaction itself: held by
    // the storage.
    Case {
        rule: "pg-advisory-lock",
        file: "jobs.go",
        positive: r#"package jobs

func Run(ctx context.Context, tx *sql.Tx, bucket *storage.BucketHandle) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(42)"); err != nil { // audit: pg_advisory_lock fenced=no
		return err
	}
	w := bucket.Object("jobs/1").NewWriter(ctx)
	_, err := w.Write([]byte("done"))
	return err
}
"#,
        fenced: Some(
            r#"package jobs

func Run(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(42)"); err != nil { // audit: pg_advisory_lock fenced=yes
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1"); err != nil {
		return err
	}
	return tx.Commit()
}
"#,
        ),
        decoy: r#"package jobs

func Run(ctx context.Context, tx *sql.Tx) error {
	log.Printf("waiting on pg_advisory_xact_lock(42)")
	_, err := tx.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
    },
    Case {
        rule: "mysql-get-lock",
        file: "jobs.sql",
        positive: r#"SELECT GET_LOCK('job', 10); -- audit: mysql_get_lock fenced=no
UPDATE jobs SET done = true WHERE id = 1;
SELECT RELEASE_LOCK('job');
"#,
        fenced: None,
        decoy: r#"-- SELECT GET_LOCK('job', 10) would serialize this.
UPDATE jobs SET note = 'GET_LOCK(job) skipped' WHERE id = 1;
"#,
    },
    Case {
        rule: "mysql-get-lock",
        file: "jobs.py",
        positive: r#"def run(cur):
    cur.execute("SELECT GET_LOCK(%s, 10)", ("job",))  # audit: mysql_get_lock fenced=no
    cur.execute("UPDATE jobs SET done = true WHERE id = 1")
    cur.execute("SELECT RELEASE_LOCK(%s)", ("job",))
"#,
        fenced: None,
        decoy: r#"from tooz import coordination


def run(cur, coordinator):
    log.info("GET_LOCK(job) timed out")
    cur.execute("UPDATE jobs SET done = true WHERE id = 1")
"#,
    },
    Case {
        rule: "sqlserver-applock",
        file: "jobs.sql",
        positive: r#"EXEC sp_getapplock @Resource = 'job', @LockMode = 'Exclusive', @LockOwner = 'Session'; -- audit: sqlserver_applock fenced=no
UPDATE jobs SET done = 1 WHERE id = 1;
EXEC sp_releaseapplock @Resource = 'job', @LockOwner = 'Session';
"#,
        fenced: Some(
            r#"BEGIN TRANSACTION;
EXEC sp_getapplock @Resource = 'job', @LockMode = 'Exclusive'; -- audit: sqlserver_applock fenced=yes
UPDATE jobs SET done = 1 WHERE id = 1;
COMMIT;
"#,
        ),
        decoy: r#"-- EXEC sp_getapplock @Resource = 'job' once guarded this.
UPDATE jobs SET done = 1 WHERE id = 1;
"#,
    },
    Case {
        rule: "sqlserver-applock",
        file: "Job.java",
        positive: r#"class Job {
    void run(Connection conn) throws SQLException {
        CallableStatement lock = conn.prepareCall("{call sp_getapplock(?, ?)}"); // audit: sqlserver_applock fenced=no
        lock.execute();
        jdbc.update("UPDATE jobs SET done = 1 WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"class Job {
    void run(Connection conn) throws SQLException {
        log.warn("sp_getapplock(job) refused");
        jdbc.update("UPDATE jobs SET done = 1 WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "pg-advisory-lock",
        file: "settle.js",
        positive: r#"const { Pool } = require("pg");

const pool = new Pool();

// A session's lock: a pooled session can end under a paused holder.
async function settle(id) {
  await pool.query("SELECT pg_advisory_lock($1)", [id]); // audit: pg_advisory_lock fenced=no
  await pool.query("UPDATE batches SET settled = true WHERE id = $1", [id]);
  await pool.query("SELECT pg_advisory_unlock($1)", [id]);
}
"#,
        fenced: Some(
            r#"const { Pool } = require("pg");

const pool = new Pool();

async function settle(id) {
  const client = await pool.connect();
  await client.query("BEGIN");
  await client.query("SELECT pg_advisory_xact_lock($1)", [id]); // audit: pg_advisory_lock fenced=yes
  await client.query("UPDATE batches SET settled = true WHERE id = $1", [id]);
  await client.query("COMMIT");
  client.release();
}
"#,
        ),
        decoy: r#"const { Pool } = require("pg");

async function settle(pool, id) {
  await pool.query("UPDATE batches SET note = 'pg_advisory_lock skipped' WHERE id = $1", [id]);
}
"#,
    },
];

/// Built-in shapes that are no rule of the catalogue: `SELECT … FOR
/// UPDATE` (its finding names no rule).
const FOR_UPDATE: Case = Case {
    rule: "",
    file: "jobs.py",
    positive: r#"def claim(cur, http):
    cur.execute(
        "SELECT id FROM jobs WHERE state = 'ready' LIMIT 1 FOR UPDATE SKIP LOCKED"  # audit: select_for_update fenced=no
    )
    http.put("https://reports/1", data="claimed")
"#,
    fenced: Some(
        r#"def claim(db):
    with db.transaction() as tx:
        tx.execute("SELECT id FROM jobs WHERE id = 1 FOR UPDATE")  # audit: select_for_update fenced=yes
        tx.execute("UPDATE jobs SET state = 'claimed' WHERE id = 1")
"#,
    ),
    decoy: r#"def claim(cur, log):
    log.info("select for update skipped")
    cur.execute("SELECT id FROM jobs WHERE state = 'ready' LIMIT 1")
"#,
};

/// A lock of a library the catalogue does not know: reported as a possible
/// lock site, judged by its writes. Decoys: process-local locks.
const POSSIBLE: &[Case] = &[
    Case {
        rule: "",
        file: "jobs.go",
        positive: r#"package jobs

import "github.com/acme/dlock"

func Run(ctx context.Context, l *dlock.Locker, db *sql.DB) error {
	if err := l.Acquire(ctx, "job"); err != nil { // audit: possible_lock fenced=no
		return err
	}
	_, err := db.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1")
	return err
}
"#,
        fenced: Some(
            r#"package jobs

import "github.com/acme/dlock"

func Run(ctx context.Context, l *dlock.Locker, db *sql.DB) error {
	if err := l.Acquire(ctx, "job"); err != nil { // audit: possible_lock fenced=yes
		return err
	}
	_, err := db.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1 AND fence_token < $1", l.Token())
	return err
}
"#,
        ),
        decoy: r#"package jobs

import "sync"

func Run(ctx context.Context, l *sync.Mutex, db *sql.DB) {
	l.Lock()
	defer l.Unlock()
	db.ExecContext(ctx, "UPDATE jobs SET done = true WHERE id = 1")
}
"#,
    },
    Case {
        rule: "",
        file: "Job.java",
        positive: r#"import com.acme.coordination.DistributedLock;

class Job {
    private final DistributedLock lock;

    void run() {
        lock.acquire(); // audit: possible_lock fenced=no
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
        fenced: None,
        decoy: r#"import java.util.concurrent.locks.ReentrantLock;

class Job {
    private final ReentrantLock lock = new ReentrantLock();

    void run() {
        lock.lock();
        jdbc.update("UPDATE jobs SET done = true WHERE id = 1");
    }
}
"#,
    },
    Case {
        rule: "",
        file: "jobs.py",
        positive: r#"import leaderkit


def lead(db):
    election = leaderkit.Election("reports")
    election.campaign("worker-1")  # audit: possible_lock fenced=no
    db.execute("UPDATE reports SET owner = 'me' WHERE id = 1")
"#,
        fenced: None,
        decoy: r#"import threading


def lead(db):
    lock = threading.Lock()
    lock.acquire()
    db.execute("UPDATE reports SET owner = 'me' WHERE id = 1")
"#,
    },
    Case {
        rule: "",
        file: "jobs.rs",
        positive: r#"use acme_lease::LeaseClient;

async fn run(leases: &LeaseClient, db: &Pool) {
    let lease = leases.acquire("job").await.unwrap(); // audit: possible_lock fenced=no
    db.execute("UPDATE jobs SET done = true WHERE id = 1").await.unwrap();
}
"#,
        fenced: None,
        decoy: r#"use tokio::sync::Mutex;
use parking_lot::RwLock;

async fn run(m: &Mutex<u32>, r: &RwLock<u32>, db: &Pool) {
    let _g = m.lock().await;
    db.execute("UPDATE jobs SET done = true WHERE id = 1").await.unwrap();
}
"#,
    },
];

/// (line, kind, fenced) as a file's markers plant them.
fn planted(code: &str) -> BTreeSet<(usize, String, Option<bool>)> {
    code.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let marker = line.split("audit: ").nth(1)?;
            let mut words = marker.split_whitespace();
            let kind = words.next()?.to_owned();
            let fenced = match words.next()?.strip_prefix("fenced=")? {
                "yes" => Some(true),
                "no" => Some(false),
                _ => None,
            };
            Some((i + 1, kind, fenced))
        })
        .collect()
}

/// Checks that `code` gives exactly its planted findings, the one at its
/// first marker found by `rule` (when given); returns what went wrong.
fn check(rule: &str, file: &str, code: &str) -> Result<(), String> {
    let language = Language::of(Path::new(file)).expect("a case's file has a language");
    let findings = audit_source(file, language, code);
    let found: BTreeSet<(usize, String, Option<bool>)> = findings
        .iter()
        .map(|f| (f.line, f.kind.name().to_owned(), f.fenced))
        .collect();
    let want = planted(code);
    if found != want {
        let reasons: Vec<String> = findings.iter().map(|f| f.text()).collect();
        return Err(format!(
            "{rule} ({file}): planted {want:?}, found {found:?}\n{}\n{code}",
            reasons.join("\n")
        ));
    }
    if let Some(line) = want.iter().map(|w| w.0).next() {
        let by = findings
            .iter()
            .find(|f| f.line == line)
            .and_then(|f| f.rule.clone());
        let expected = (!rule.is_empty()).then(|| rule.to_owned());
        if by != expected {
            return Err(format!(
                "{rule} ({file}): the finding at line {line} is by rule {by:?}\n{code}"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_case_finds_its_lock_judges_its_fenced_variant_and_ignores_its_decoy() {
    let mut failures = Vec::new();
    for case in CASES.iter().chain([&FOR_UPDATE]).chain(POSSIBLE) {
        let positive = planted(case.positive);
        assert_eq!(positive.len(), 1, "{}: one planted lock", case.rule);
        failures.extend(check(case.rule, case.file, case.positive).err());
        if let Some(fenced) = case.fenced {
            assert!(
                planted(fenced).iter().all(|p| p.2 == Some(true)),
                "{}: the fenced variant plants fenced=yes",
                case.rule
            );
            failures.extend(check(case.rule, case.file, fenced).err());
        }
        assert!(
            planted(case.decoy).is_empty(),
            "{}: a decoy plants nothing",
            case.rule
        );
        failures.extend(check(case.rule, case.file, case.decoy).err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_bundled_rule_names_its_library_and_has_a_case() {
    let rules = Rules::bundled();
    for entry in rules.catalogue() {
        assert!(
            entry.library.is_some() && !entry.ecosystems.is_empty(),
            "rule `{}` names no library or ecosystem",
            entry.id
        );
        assert!(
            CASES.iter().any(|c| c.rule == entry.id),
            "rule `{}` has no case",
            entry.id
        );
        let with_token = entry.kind.token().is_some();
        if with_token {
            assert!(
                CASES
                    .iter()
                    .any(|c| c.rule == entry.id && c.fenced.is_some()),
                "rule `{}` finds a kind that hands out a token, and has no fenced case",
                entry.id
            );
        }
    }
}

#[test]
fn the_list_names_every_rule_under_its_kind_and_the_kinds_are_the_sarif_rule_ids() {
    let out = crate::fencesim(&["audit", "--list"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let kinds: Vec<&str> = out
        .stdout
        .lines()
        .take_while(|l| !l.starts_with("libraries "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split(" (").next())
        .collect();
    let sarif = crate::fencesim(&["audit", crate::FIXTURES, "--sarif"]);
    let log: serde_json::Value = serde_json::from_str(&sarif.stdout).expect("a SARIF log");
    let ids: Vec<&str> = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("an id"))
        .collect();
    assert_eq!(kinds, ids, "{}", out.stdout);
    let rules = Rules::bundled();
    let mut kind = "";
    let mut listed = Vec::new();
    for line in out.stdout.lines() {
        if !line.starts_with(' ') {
            kind = line.split(" (").next().unwrap_or("");
        } else if let Some(rest) = line.strip_prefix("  rule ") {
            let id = rest.split([' ', ':']).next().unwrap_or("");
            listed.push((id.to_owned(), kind.to_owned()));
        }
    }
    let catalogue: Vec<(String, String)> = rules
        .catalogue()
        .iter()
        .map(|e| (e.id.clone(), e.kind.name().to_owned()))
        .collect();
    let mut sorted = catalogue.clone();
    sorted.sort();
    listed.sort();
    assert_eq!(listed, sorted, "every rule once, under its kind");
    for (library, words) in rules.libraries() {
        assert!(
            out.stdout
                .contains(&format!("  {library}: {}\n", words.join(", "))),
            "{library}"
        );
    }
}

#[test]
fn the_list_holds_a_rule_files_rules_and_takes_no_path() {
    let dir = crate::TempDir::new("list-rules");
    dir.write(
        "acme.yaml",
        b"rules:\n  - id: acme-hold\n    kind: redis_set_nx\n    calls: [hold]\n    library: acme locks\n    ecosystems: [python]\n    releases: [drop]\n",
    );
    let out = crate::fencesim_in(dir.path(), &["audit", "--list", "--rules", "acme.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("  rule acme-hold [python] acme locks: takes hold; releases drop\n"),
        "{}",
        out.stdout
    );
    let both = crate::fencesim_in(dir.path(), &["audit", "--list", "."]);
    assert_eq!(both.code, 2, "{}", both.stdout);
}
