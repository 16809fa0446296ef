// weft/host/host.h — the native host in one include.
#pragma once

#include "weft/host/builtins.h"
#include "weft/host/client.h"
#include "weft/host/server.h"
#include "weft/host/transport.h"
