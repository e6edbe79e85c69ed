{
  "targets": [
    {
      "target_name": "olp_spawn",
      "sources": ["spawn.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
