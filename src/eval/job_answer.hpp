#pragma once
// Superseded: the worker's answer (JobAnswer, parse_job_answer) is part of the typed worker
// protocol in eval/protocol.hpp, with every other message of the judge and the runner. This
// header only forwards there; remove it (and job_answer.cpp) once nothing includes it.
#include "eval/protocol.hpp"
