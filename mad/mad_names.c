/* Names of MAD constants for logs and the command line. */
#include "mad/cc.h"
#include "mad/mad_types.h"

const char *mad_status_str(uint16_t status)
{
	switch (status & 0x7fff) {
	case MAD_STATUS_OK: return "success";
	case MAD_STATUS_SA_NO_RESOURCES: return "SA: insufficient resources (ERR_NO_RESOURCES)";
	case MAD_STATUS_SA_REQ_INVALID: return "SA: invalid request (ERR_REQ_INVALID)";
	case MAD_STATUS_SA_NO_RECORDS: return "SA: no records (ERR_NO_RECORDS)";
	case MAD_STATUS_SA_TOO_MANY_RECORDS: return "SA: too many records (ERR_TOO_MANY_RECORDS)";
	case MAD_STATUS_SA_INVALID_GID: return "SA: invalid GID (ERR_REQ_INVALID_GID)";
	case MAD_STATUS_SA_INSUF_COMPONENTS:
		return "SA: insufficient components (ERR_REQ_INSUFFICIENT_COMPONENTS)";
	case MAD_STATUS_SA_REQ_DENIED: return "SA: request denied (ERR_REQ_DENIED)";
	case MAD_STATUS_SA_PRI_SUGGESTED: return "SA: priority suggested (STATUS_PRI_SUGGESTED)";
	}
	switch (status & 0x1c) {
	case 0x04: return "bad base or class version";
	case 0x08: return "method not supported";
	case 0x0c: return "method/attribute combination not supported";
	case 0x1c: return "invalid value in attribute or modifier";
	}
	if (status & MAD_STATUS_BUSY)
		return "busy";
	if (status & MAD_STATUS_REDIRECT)
		return "redirect required";
	return "unknown status";
}

const char *mad_method_str(uint8_t method)
{
	switch (method) {
	case MAD_METHOD_GET: return "Get";
	case MAD_METHOD_SET: return "Set";
	case MAD_METHOD_SEND: return "Send";
	case MAD_METHOD_TRAP: return "Trap";
	case MAD_METHOD_REPORT: return "Report";
	case MAD_METHOD_TRAP_REPRESS: return "TrapRepress";
	case MAD_METHOD_GET_TABLE: return "GetTable";
	case MAD_METHOD_GET_TRACE_TABLE: return "GetTraceTable";
	case MAD_METHOD_GET_MULTI: return "GetMulti";
	case MAD_METHOD_DELETE: return "Delete";
	case MAD_METHOD_GET_RESP: return "GetResp";
	case MAD_METHOD_REPORT_RESP: return "ReportResp";
	case MAD_METHOD_GET_TABLE_RESP: return "GetTableResp";
	case MAD_METHOD_GET_MULTI_RESP: return "GetMultiResp";
	case MAD_METHOD_DELETE_RESP: return "DeleteResp";
	}
	return "unknown method";
}

const char *mad_class_str(uint8_t mgmt_class)
{
	switch (mgmt_class) {
	case MAD_CLASS_SUBN_LID: return "SubnMgt (LID-routed)";
	case MAD_CLASS_SUBN_DR: return "SubnMgt (directed route)";
	case MAD_CLASS_SUBN_ADM: return "SubnAdm";
	case MAD_CLASS_PERF: return "PerfMgt";
	case MAD_CLASS_CC: return "CongestionControl";
	}
	return "unknown class";
}

const char *port_state_str(uint8_t state)
{
	static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE"};
	return state < 5 ? names[state] : "reserved";
}

const char *node_type_str(uint8_t type)
{
	switch (type) {
	case NODE_TYPE_CA: return "CA";
	case NODE_TYPE_SWITCH: return "Switch";
	case NODE_TYPE_ROUTER: return "Router";
	}
	return "unknown";
}
