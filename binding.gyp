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
  ]
}
