{
  "targets": [
    {
      "target_name": "profpack",
      "sources": ["<!@(node scripts/native-sources.js)"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-O3", "-fvisibility=hidden"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "MACOSX_DEPLOYMENT_TARGET": "10.15"
      },
      "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1 } },
      "conditions": [
        ["OS=='linux'", {
          "ldflags": ["-static-libstdc++", "-Wl,--gc-sections", "-Wl,--as-needed"],
          "cflags_cc": ["-ffunction-sections", "-fdata-sections"]
        }]
      ]
    }
  ],
  "conditions": [
    # V8's own API (lib/record/program/heap/probe.ts loads it, else the inspector path): per Node major, not on Windows
    # (the win32 prebuild is cross-compiled from N-API headers, scripts/prebuild-win.sh).
    ["OS!='win'", {
      "targets": [
        {
          "target_name": "profpack_heap",
          "type": "shared_library",
          "product_prefix": "",
          "product_extension": "v8heap",
          # glibc_compat: the static libstdc++'s two symbols newer than glibc 2.28, as in the N-API addon.
          "sources": ["native/heap/heap_sampler.cc", "native/platform/glibc_compat.cc"],
          # The C++ standard is node-gyp's for the headers' Node (gnu++17 for 20, gnu++20 from 22: V8's headers need it).
          "cflags_cc": ["-O2", "-fvisibility=hidden", "-Wno-cast-function-type"],
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "MACOSX_DEPLOYMENT_TARGET": "10.15",
            "OTHER_LDFLAGS": ["-undefined dynamic_lookup"]
          },
          "conditions": [["OS=='linux'", { "ldflags": ["-static-libstdc++", "-Wl,--as-needed"] }]]
        }
      ]
    }]
  ]
}
