// Superseded by eval/protocol.cpp (the typed worker protocol); no longer built. Remove this file.
