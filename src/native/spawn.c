// olp's process starter: posix_spawn(3) (a CLONE_VFORK child on Linux) instead of libuv's
// fork(2). fork copies the daemon's page tables, so its cost grows with the daemon's memory:
// about 4 ms of main-thread time per CLI run at olp's ~110 MB, against a flat ~0.3 ms here.
//
// start(file, argv, envp, cwd, onExit) -> [pid, stdin, stdout, stderr] (the parent's ends of
//   three AF_UNIX socketpairs, as libuv makes them) or a negative errno. The child gets its own
//   session (setsid), default signal dispositions and an empty signal mask, like Node's
//   `detached: true`. onExit(code, signal) is called once from the event loop when the child
//   has exited and been reaped (signal is a number; both null when it could not be reaped).
// supported() -> whether pidfd_open(2) works here (Linux 5.3+); without it olp uses Node's spawn.
// limitArenas(n) -> whether malloc now makes at most n arenas (glibc's M_ARENA_MAX; see heap.ts).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <node_api.h>
#include <uv.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref on_exit;
  napi_async_context async;
  pid_t pid;
  int pidfd;
} watch_t;

static int pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

static void watch_closed(uv_handle_t *handle) {
  watch_t *w = handle->data;
  close(w->pidfd);
  napi_delete_reference(w->env, w->on_exit);
  napi_async_destroy(w->env, w->async);
  free(w);
}

static void child_exited(uv_poll_t *poll, int status, int events) {
  (void)events;
  watch_t *w = poll->data;
  int wstatus = 0;
  pid_t got;
  do got = waitpid(w->pid, &wstatus, WNOHANG);
  while (got < 0 && errno == EINTR);
  if (got == 0) {
    if (status == 0) return;  // woken early: the child is still running
    // The poll failed with the child alive: never leave it unwatched and unreaped.
    kill(-w->pid, SIGKILL);
    kill(w->pid, SIGKILL);
    do got = waitpid(w->pid, &wstatus, 0);
    while (got < 0 && errno == EINTR);
  }
  uv_poll_stop(poll);

  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value argv[2], cb, recv, ignored;
  napi_get_null(env, &argv[0]);
  napi_get_null(env, &argv[1]);
  if (got == w->pid && WIFEXITED(wstatus)) napi_create_int32(env, WEXITSTATUS(wstatus), &argv[0]);
  else if (got == w->pid && WIFSIGNALED(wstatus)) napi_create_int32(env, WTERMSIG(wstatus), &argv[1]);
  napi_get_reference_value(env, w->on_exit, &cb);
  napi_get_global(env, &recv);
  if (napi_make_callback(env, w->async, recv, cb, 2, argv, &ignored) == napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)poll, watch_closed);
}

/** A JS string as a malloc'd C string; NULL on failure. */
static char *c_string(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (s && napi_get_value_string_utf8(env, v, s, len + 1, &len) != napi_ok) {
    free(s);
    return NULL;
  }
  return s;
}

/** A JS array of strings as a NULL-terminated, malloc'd vector; NULL on failure. */
static char **c_vector(napi_env env, napi_value arr) {
  uint32_t n = 0;
  if (napi_get_array_length(env, arr, &n) != napi_ok) return NULL;
  char **v = calloc(n + 1, sizeof(char *));
  if (!v) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, arr, i, &item) != napi_ok || !(v[i] = c_string(env, item))) {
      for (uint32_t j = 0; j < i; j++) free(v[j]);
      free(v);
      return NULL;
    }
  }
  return v;
}

static void free_vector(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

static napi_value int_value(napi_env env, int n) {
  napi_value v;
  napi_create_int32(env, n, &v);
  return v;
}

static int spawn_child(const char *file, char **argv, char **envp, const char *cwd, int parent_fds[3], pid_t *pid) {
  int pairs[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  int err = 0;
  for (int i = 0; i < 3 && !err; i++)
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pairs[i]) != 0) err = errno;

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  if (!err) {
    // dup2 onto 0-2 clears close-on-exec there; every other descriptor of the daemon is
    // close-on-exec (libuv and Node open them so), so the child gets exactly these three.
    for (int i = 0; i < 3; i++) posix_spawn_file_actions_adddup2(&actions, pairs[i][1], i);
    if (cwd[0]) posix_spawn_file_actions_addchdir_np(&actions, cwd);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#ifdef POSIX_SPAWN_SETSID
    flags |= POSIX_SPAWN_SETSID;
#else
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
#endif
    posix_spawnattr_setflags(&attr, flags);
    err = posix_spawn(pid, file, &actions, &attr, argv, envp);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int i = 0; i < 3; i++) {
    if (pairs[i][1] >= 0) close(pairs[i][1]);
    if (err && pairs[i][0] >= 0) close(pairs[i][0]);
    parent_fds[i] = pairs[i][0];
  }
  return err;
}

static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value args[5];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 5) {
    napi_throw_type_error(env, NULL, "start(file, argv, envp, cwd, onExit)");
    return NULL;
  }
  char *file = c_string(env, args[0]);
  char *cwd = c_string(env, args[3]);
  char **argv = c_vector(env, args[1]);
  char **envp = c_vector(env, args[2]);
  napi_value result = NULL;
  if (!file || !cwd || !argv || !envp) {
    napi_throw_type_error(env, NULL, "start: file and cwd must be strings, argv and envp arrays of strings");
    goto done;
  }

  int fds[3];
  pid_t pid = 0;
  int err = spawn_child(file, argv, envp, cwd, fds, &pid);
  if (err) {
    result = int_value(env, -err);
    goto done;
  }

  watch_t *w = calloc(1, sizeof(watch_t));
  if (!w) {
    // Never leave a child nobody will reap.
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 3; i++) close(fds[i]);
    result = int_value(env, -ENOMEM);
    goto done;
  }
  uv_loop_t *loop = NULL;
  napi_value name;
  w->env = env;
  w->pid = pid;
  w->pidfd = pidfd_open(pid);
  napi_get_uv_event_loop(env, &loop);
  napi_create_string_utf8(env, "olp.child", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, args[4], 1, &w->on_exit);
  napi_async_init(env, NULL, name, &w->async);
  w->poll.data = w;
  if (w->pidfd < 0 || uv_poll_init(loop, &w->poll, w->pidfd) != 0) {
    // Cannot happen once supported() said yes; never leave a child nobody will reap.
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 3; i++) close(fds[i]);
    if (w->pidfd >= 0) close(w->pidfd);
    napi_delete_reference(env, w->on_exit);
    napi_async_destroy(env, w->async);
    free(w);
    result = int_value(env, -EAGAIN);
    goto done;
  }
  uv_poll_start(&w->poll, UV_READABLE, child_exited);

  napi_create_array_with_length(env, 4, &result);
  napi_set_element(env, result, 0, int_value(env, pid));
  for (int i = 0; i < 3; i++) napi_set_element(env, result, i + 1, int_value(env, fds[i]));

done:
  free(file);
  free(cwd);
  free_vector(argv);
  free_vector(envp);
  return result;
}

static napi_value supported(napi_env env, napi_callback_info info) {
  (void)info;
  int fd = pidfd_open(getpid());
  napi_value v;
  napi_get_boolean(env, fd >= 0, &v);
  if (fd >= 0) close(fd);
  return v;
}

/*
 * signal(pid, sig): kill(2), returning 0 or -errno. A process group that has already emptied
 * (ESRCH) is the normal case after a CLI exits; process.kill reports it by throwing an Error
 * whose stack trace costs more than the call itself.
 */
static napi_value send_signal(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  int32_t pid = 0, sig = 0;
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 2 || napi_get_value_int32(env, args[0], &pid) != napi_ok || napi_get_value_int32(env, args[1], &sig) != napi_ok || pid == 0 || pid == -1) {
    napi_throw_type_error(env, NULL, "signal(pid, sig): a process or group id (not 0 or -1) and a signal number");
    return NULL;
  }
  return int_value(env, kill(pid, sig) == 0 ? 0 : -errno);
}

/*
 * limitArenas(n): mallopt(M_ARENA_MAX, n). glibc gives each thread that meets contention an arena
 * of its own, up to 8 per core, and memory freed in one is not reused by the others; a daemon
 * with a dozen threads holds a few MB more than it uses. Applies to arenas made from now on.
 * false where the C library has no such setting (musl).
 */
static napi_value limit_arenas(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, v;
  int32_t n = 0;
  napi_get_cb_info(env, info, &argc, &arg, NULL, NULL);
  if (argc < 1 || napi_get_value_int32(env, arg, &n) != napi_ok || n < 1) {
    napi_throw_type_error(env, NULL, "limitArenas(n): a count of at least 1");
    return NULL;
  }
#ifdef M_ARENA_MAX
  napi_get_boolean(env, mallopt(M_ARENA_MAX, n) == 1, &v);
#else
  napi_get_boolean(env, false, &v);
#endif
  return v;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"start", NULL, start, NULL, NULL, NULL, napi_default, NULL},
      {"supported", NULL, supported, NULL, NULL, NULL, napi_default, NULL},
      {"signal", NULL, send_signal, NULL, NULL, NULL, napi_default, NULL},
      {"limitArenas", NULL, limit_arenas, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, 4, props);
  return exports;
}
