/* Constants of the InfiniBand management datagram protocol (IBA vol. 1, ch. 13-15). */
#ifndef IBSMD_MAD_TYPES_H
#define IBSMD_MAD_TYPES_H

#include <stdint.h>

#define MAD_SIZE          256
#define MAD_HDR_SIZE      24
#define MAD_RMPP_HDR_END  36 /* common header + RMPP header */
#define MAD_SMP_DATA_OFF  64
#define MAD_SMP_DATA_SIZE 64
#define MAD_SA_HDR_END    56 /* common + RMPP + SA header */
#define MAD_SA_DATA_SIZE  200
#define MAD_DR_MAX_HOPS   63

#define MAD_BASE_VERSION 1

enum mad_class {
	MAD_CLASS_SUBN_LID = 0x01,
	MAD_CLASS_SUBN_ADM = 0x03,
	MAD_CLASS_PERF = 0x04,
	MAD_CLASS_SUBN_DR = 0x81,
};

#define MAD_CLASS_VERSION_SM 1
#define MAD_CLASS_VERSION_SA 2
#define MAD_CLASS_VERSION_PM 1

enum mad_method {
	MAD_METHOD_GET = 0x01,
	MAD_METHOD_SET = 0x02,
	MAD_METHOD_SEND = 0x03,
	MAD_METHOD_TRAP = 0x05,
	MAD_METHOD_REPORT = 0x06,
	MAD_METHOD_TRAP_REPRESS = 0x07,
	MAD_METHOD_GET_TABLE = 0x12,
	MAD_METHOD_GET_TRACE_TABLE = 0x13,
	MAD_METHOD_GET_MULTI = 0x14,
	MAD_METHOD_DELETE = 0x15,
	MAD_METHOD_RESP = 0x80, /* response bit */
	MAD_METHOD_GET_RESP = 0x81,
	MAD_METHOD_REPORT_RESP = 0x86,
	MAD_METHOD_GET_TABLE_RESP = 0x92,
	MAD_METHOD_GET_MULTI_RESP = 0x94,
	MAD_METHOD_DELETE_RESP = 0x95,
};

enum mad_attr {
	MAD_ATTR_CLASS_PORT_INFO = 0x0001,
	MAD_ATTR_NOTICE = 0x0002,
	MAD_ATTR_INFORM_INFO = 0x0003,
	MAD_ATTR_NODE_DESC = 0x0010,
	MAD_ATTR_NODE_INFO = 0x0011,
	MAD_ATTR_SWITCH_INFO = 0x0012,
	MAD_ATTR_GUID_INFO = 0x0014,
	MAD_ATTR_PORT_INFO = 0x0015,
	MAD_ATTR_PKEY_TABLE = 0x0016,
	MAD_ATTR_SL2VL_TABLE = 0x0017,
	MAD_ATTR_VLARB_TABLE = 0x0018,
	MAD_ATTR_LFT = 0x0019,
	MAD_ATTR_RFT = 0x001a,
	MAD_ATTR_MFT = 0x001b,
	MAD_ATTR_SM_INFO = 0x0020,
	MAD_ATTR_VENDOR_DIAG = 0x0030,
	MAD_ATTR_LED_INFO = 0x0031,
	/* SA attributes */
	MAD_ATTR_NODE_RECORD = 0x0011,
	MAD_ATTR_PORT_INFO_RECORD = 0x0012,
	MAD_ATTR_SL2VL_RECORD = 0x0013,
	MAD_ATTR_SWITCH_INFO_RECORD = 0x0014,
	MAD_ATTR_LFT_RECORD = 0x0015,
	MAD_ATTR_RFT_RECORD = 0x0016,
	MAD_ATTR_MFT_RECORD = 0x0017,
	MAD_ATTR_SM_INFO_RECORD = 0x0018,
	MAD_ATTR_LINK_RECORD = 0x0020,
	MAD_ATTR_GUID_INFO_RECORD = 0x0030,
	MAD_ATTR_SERVICE_RECORD = 0x0031,
	MAD_ATTR_PKEY_TABLE_RECORD = 0x0033,
	MAD_ATTR_PATH_RECORD = 0x0035,
	MAD_ATTR_VLARB_RECORD = 0x0036,
	MAD_ATTR_MCMEMBER_RECORD = 0x0038,
	MAD_ATTR_TRACE_RECORD = 0x0039,
	MAD_ATTR_MULTIPATH_RECORD = 0x003a,
	MAD_ATTR_INFORM_INFO_RECORD = 0x00f3,
	/* PMA */
	MAD_ATTR_PORT_COUNTERS = 0x0012,
};

/* MAD status (IBA 13.4.7): bits 2-4 are a code, bits 8-14 class specific. */
enum mad_status {
	MAD_STATUS_OK = 0x0000,
	MAD_STATUS_BUSY = 0x0001,
	MAD_STATUS_REDIRECT = 0x0002,
	MAD_STATUS_BAD_VERSION = 0x0004,
	MAD_STATUS_UNSUP_METHOD = 0x0008,
	MAD_STATUS_UNSUP_METHOD_ATTR = 0x000c,
	MAD_STATUS_INVALID_FIELD = 0x001c,
	/* SA class-specific (bits 8-15) */
	MAD_STATUS_SA_NO_RESOURCES = 0x0100,
	MAD_STATUS_SA_REQ_INVALID = 0x0200,
	MAD_STATUS_SA_NO_RECORDS = 0x0300,
	MAD_STATUS_SA_TOO_MANY_RECORDS = 0x0400,
	MAD_STATUS_SA_INVALID_GID = 0x0500,
	MAD_STATUS_SA_INSUF_COMPONENTS = 0x0600,
	MAD_STATUS_SA_REQ_DENIED = 0x0700,
	MAD_STATUS_SA_PRI_SUGGESTED = 0x0800,
};

enum node_type {
	NODE_TYPE_CA = 1,
	NODE_TYPE_SWITCH = 2,
	NODE_TYPE_ROUTER = 3,
};

enum port_state {
	PORT_STATE_NOP = 0,
	PORT_STATE_DOWN = 1,
	PORT_STATE_INIT = 2,
	PORT_STATE_ARMED = 3,
	PORT_STATE_ACTIVE = 4,
};

enum port_phys_state {
	PHYS_STATE_SLEEP = 1,
	PHYS_STATE_POLLING = 2,
	PHYS_STATE_DISABLED = 3,
	PHYS_STATE_TRAINING = 4,
	PHYS_STATE_LINKUP = 5,
	PHYS_STATE_ERROR_RECOVERY = 6,
};

enum sm_state {
	SM_STATE_NOT_ACTIVE = 0,
	SM_STATE_DISCOVERING = 1,
	SM_STATE_STANDBY = 2,
	SM_STATE_MASTER = 3,
};

/* RMPP (IBA 13.6) */
enum rmpp_type {
	RMPP_TYPE_DATA = 1,
	RMPP_TYPE_ACK = 2,
	RMPP_TYPE_STOP = 3,
	RMPP_TYPE_ABORT = 4,
};

enum rmpp_flag {
	RMPP_FLAG_ACTIVE = 0x1,
	RMPP_FLAG_FIRST = 0x2,
	RMPP_FLAG_LAST = 0x4,
};

enum rmpp_status {
	RMPP_STATUS_NORMAL = 0,
	RMPP_STATUS_RESOURCES = 1,         /* STOP */
	RMPP_STATUS_T2L = 118,             /* total time too long */
	RMPP_STATUS_BAD_LEN = 119,         /* inconsistent last and payload length */
	RMPP_STATUS_BAD_SEG = 120,         /* inconsistent first and segment number */
	RMPP_STATUS_BADT = 121,            /* bad RMPPType */
	RMPP_STATUS_W2S = 122,             /* NewWindowLast too small */
	RMPP_STATUS_S2B = 123,             /* SegmentNumber too big */
	RMPP_STATUS_BAD_STATUS = 124,      /* illegal status */
	RMPP_STATUS_UNV = 125,             /* unsupported version */
	RMPP_STATUS_TMR = 126,             /* too many retries */
	RMPP_STATUS_UNSPEC = 127,
};

#define RMPP_VERSION 1

#define LID_PERMISSIVE 0xffff
#define QP0            0
#define QP1            1
#define QP1_QKEY       0x80010000u
#define PKEY_DEFAULT   0xffff

/* Human-readable names, for logs and the CLI. */
const char *mad_status_str(uint16_t status);
const char *mad_method_str(uint8_t method);
const char *mad_class_str(uint8_t mgmt_class);
const char *port_state_str(uint8_t state);
const char *node_type_str(uint8_t type);

#endif
