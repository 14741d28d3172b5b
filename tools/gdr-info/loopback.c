/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loopback.h"

/* RoCE: the ::ffff:a.b.c.d GID that rdma_cm would use, else index 0. */
static int pick_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const uint8_t v4[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};
	int i;

	for (i = 0; i < 16; i++)
		if (!ibv_query_gid(ctx, 1, i, gid) && !memcmp(gid->raw, v4, 12))
			return i;
	return ibv_query_gid(ctx, 1, 0, gid) ? -1 : 0;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a;
	struct ibv_qp_attr m;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &a);
	if (!qp)
		return NULL;
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(qp, &m,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dest,
		      const struct ibv_port_attr *port, union ibv_gid *gid,
		      int gid_index)
{
	struct ibv_qp_attr m;
	int e;

	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = port->active_mtu;
	m.dest_qp_num = dest;
	m.max_dest_rd_atomic = 1;
	m.min_rnr_timer = 12;
	m.ah_attr.port_num = 1;
	if (port->link_layer == IBV_LINK_LAYER_INFINIBAND) {
		m.ah_attr.dlid = port->lid;
	} else {
		m.ah_attr.is_global = 1;
		m.ah_attr.grh.dgid = *gid;
		m.ah_attr.grh.sgid_index = (uint8_t)gid_index;
		m.ah_attr.grh.hop_limit = 64;
	}
	/* ibv_modify_qp returns its errno (it need not set errno). */
	e = ibv_modify_qp(qp, &m,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
	if (e)
		return e;
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTS;
	m.timeout = 14;
	m.retry_cnt = 7;
	m.rnr_retry = 7;
	m.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &m,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

int loopback_write(struct ibv_pd *pd, struct ibv_mr *src, struct ibv_mr *dst,
		   size_t len, char *err, size_t n)
{
	struct ibv_context *ctx = pd->context;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_port_attr port;
	struct ibv_send_wr wr, *bad;
	struct ibv_cq *cq = NULL;
	struct ibv_sge sge;
	union ibv_gid gid;
	struct ibv_wc wc;
	long spins = 0;
	int gi = 0, got = 0, ret = -1, e;

	memset(&gid, 0, sizeof(gid));
	/* The verbs below return their errno rather than set errno. */
	e = ibv_query_port(ctx, 1, &port);
	if (e) {
		snprintf(err, n, "ibv_query_port: %s", strerror(e));
		return -1;
	}
	if (port.state != IBV_PORT_ACTIVE) {
		snprintf(err, n, "port 1 is %s, not active",
			 ibv_port_state_str(port.state));
		return -1;
	}
	if (port.link_layer != IBV_LINK_LAYER_INFINIBAND &&
	    (gi = pick_gid(ctx, &gid)) < 0) {
		snprintf(err, n, "no GID on port 1");
		return -1;
	}
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (cq) {
		qa = make_qp(pd, cq);
		qb = make_qp(pd, cq);
	}
	if (!qa || !qb) {
		snprintf(err, n, "creating the CQ/QPs failed: %s",
			 strerror(errno));
		goto out;
	}
	e = connect_qp(qa, qb->qp_num, &port, &gid, gi);
	if (!e)
		e = connect_qp(qb, qa->qp_num, &port, &gid, gi);
	if (e) {
		snprintf(err, n, "connecting the QPs failed: %s", strerror(e));
		goto out;
	}
	sge.addr = (uintptr_t)src->addr;
	sge.length = (uint32_t)len;
	sge.lkey = src->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst->addr;
	wr.wr.rdma.rkey = dst->rkey;
	e = ibv_post_send(qa, &wr, &bad);
	if (e) {
		snprintf(err, n, "ibv_post_send: %s", strerror(e));
		goto out;
	}
	while (got == 0 && spins++ < 100000000)
		got = ibv_poll_cq(cq, 1, &wc);
	if (got != 1)
		snprintf(err, n, "no completion for the RDMA write");
	else if (wc.status != IBV_WC_SUCCESS)
		snprintf(err, n, "RDMA write completed with %s",
			 ibv_wc_status_str(wc.status));
	else
		ret = 0;
out:
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	if (cq)
		ibv_destroy_cq(cq);
	return ret;
}
