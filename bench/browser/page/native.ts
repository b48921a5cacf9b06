/**
 * Plain Chromium WebRTC baseline: one RTCPeerConnection carrying one video
 * track (Chromium's own GCC, NACK, FEC, jitter buffer) over ONE emulated path.
 * Offer/answer and ICE candidates go through our signalling server in
 * simple-peer's signal format ({type:'offer'|'answer', sdp} and
 * {type:'candidate', candidate:{candidate, sdpMid, sdpMLineIndex}}) on
 * `pathId`, so the harness's rewriteSignal hook (tools/harness/ice-rewrite.ts)
 * pins its ICE to that path's relay exactly as for our own paths.
 */
import { SignallingClient } from '../../../src/signalling/client.js';

export interface NativeOptions {
  signallingUrl: string;
  room: string;
  role: 'sender' | 'receiver';
  pathId: number;
  /** Preferred codec ('h264', 'vp8', 'vp9', 'av1'); falls back to Chromium's default order. */
  codec: string;
  /** encodings[0].maxBitrate on the sender (bps); 0 = Chromium's default. */
  maxBitrateBps: number;
}

/** The audio fields the bench keeps from the receiver's audio inbound-rtp (webrtc-stats). */
const INBOUND_AUDIO = ['packetsReceived', 'packetsLost', 'concealedSamples', 'totalSamplesReceived', 'jitterBufferDelay', 'jitterBufferEmittedCount'] as const;

export interface NativePeer {
  pc: RTCPeerConnection;
  /** Resolves with the remote video track (receiver). */
  remoteTrack: Promise<MediaStreamTrack>;
  /**
   * Start sending `track` (sender), and `audio` beside it on the same
   * RTCPeerConnection when given (the fake microphone, so Chromium carries
   * the same load as our call with audio): negotiates when the receiver is in the room.
   */
  send(track: MediaStreamTrack, audio?: MediaStreamTrack): Promise<void>;
  stats(): Promise<NativeStats>;
  errors: string[];
  close(): void;
}

/** The getStats fields the bench keeps (undefined where Chromium does not report them). */
export interface NativeStats {
  inbound?: Record<string, number | string | undefined>;
  outbound?: Record<string, number | string | undefined>;
  remoteInbound?: Record<string, number | string | undefined>;
  candidatePair?: Record<string, number | string | undefined>;
  codec?: string;
  /** Receiver, when audio is sent: its audio inbound-rtp. */
  inboundAudio?: Record<string, number | string | undefined>;
  connectionState: string;
}

const INBOUND = [
  'framesReceived',
  'framesDecoded',
  'framesDropped',
  'keyFramesDecoded',
  'framesPerSecond',
  'frameWidth',
  'frameHeight',
  'freezeCount',
  'totalFreezesDuration',
  'pauseCount',
  'totalPausesDuration',
  'jitterBufferDelay',
  'jitterBufferTargetDelay',
  'jitterBufferMinimumDelay',
  'jitterBufferEmittedCount',
  'jitter',
  'packetsReceived',
  'packetsLost',
  'bytesReceived',
  'retransmittedBytesReceived',
  'headerBytesReceived',
  'nackCount',
  'firCount',
  'pliCount',
  'totalDecodeTime',
  'totalProcessingDelay',
  'totalInterFrameDelay',
  'fecPacketsReceived',
  'fecPacketsDiscarded',
  'retransmittedPacketsReceived',
  'decoderImplementation',
] as const;
const OUTBOUND = [
  'framesEncoded',
  'framesSent',
  'keyFramesEncoded',
  'framesPerSecond',
  'frameWidth',
  'frameHeight',
  'targetBitrate',
  'bytesSent',
  'headerBytesSent',
  'packetsSent',
  'retransmittedPacketsSent',
  'retransmittedBytesSent',
  'nackCount',
  'firCount',
  'pliCount',
  'qualityLimitationReason',
  'totalEncodeTime',
  'totalPacketSendDelay',
  'encoderImplementation',
  'qpSum',
] as const;
const REMOTE_INBOUND = ['roundTripTime', 'fractionLost', 'packetsLost', 'jitter'] as const;
const PAIR = ['currentRoundTripTime', 'availableOutgoingBitrate', 'bytesSent', 'bytesReceived', 'state'] as const;

function pick(r: Record<string, unknown>, keys: readonly string[]): Record<string, number | string | undefined> {
  const o: Record<string, number | string | undefined> = {};
  for (const k of keys) {
    const v = r[k];
    if (typeof v === 'number' || typeof v === 'string') o[k] = v;
  }
  return o;
}

export function startNativePeer(o: NativeOptions): NativePeer {
  const errors: string[] = [];
  const err = (s: string) => {
    if (errors.length < 100) errors.push(s);
  };
  const pc = new RTCPeerConnection({ iceServers: [], bundlePolicy: 'max-bundle', rtcpMuxPolicy: 'require' });
  const sig = new SignallingClient();
  let remote: string | undefined;
  const pendingCandidates: RTCIceCandidateInit[] = [];
  let haveRemoteDescription = false;
  let trackToSend: MediaStreamTrack | undefined;
  let audioToSend: MediaStreamTrack | undefined;
  // Receiver: remote audio is played out (decoded and pulled in real time), as our call plays its audio.
  let audioEl: HTMLAudioElement | undefined;
  let negotiated = false;
  let resolveTrack: (t: MediaStreamTrack) => void = () => undefined;
  const remoteTrack = new Promise<MediaStreamTrack>((r) => (resolveTrack = r));

  pc.ontrack = (ev) => {
    if (ev.track.kind === 'video') resolveTrack(ev.track);
    else if (ev.track.kind === 'audio' && !audioEl) {
      audioEl = new Audio();
      audioEl.srcObject = new MediaStream([ev.track]);
      void audioEl.play().catch((e) => err(`audio play: ${String(e)}`));
    }
  };
  pc.onicecandidate = (ev) => {
    if (!remote) return;
    const c = ev.candidate;
    const data = c
      ? { type: 'candidate', candidate: { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex } }
      : { type: 'candidate', candidate: { candidate: '', sdpMid: '0', sdpMLineIndex: 0 } };
    sig.sendSignal(remote, o.pathId, data);
  };

  const negotiate = async () => {
    if (negotiated || !remote || !trackToSend || o.role !== 'sender') return;
    negotiated = true;
    const stream = new MediaStream([trackToSend]);
    const sendEncodings: RTCRtpEncodingParameters[] = o.maxBitrateBps > 0 ? [{ maxBitrate: o.maxBitrateBps }] : [{}];
    const tr = pc.addTransceiver(trackToSend, { direction: 'sendonly', streams: [stream], sendEncodings });
    if (audioToSend) {
      stream.addTrack(audioToSend);
      pc.addTransceiver(audioToSend, { direction: 'sendonly', streams: [stream] });
    }
    const caps = RTCRtpSender.getCapabilities('video');
    if (caps && typeof tr.setCodecPreferences === 'function') {
      const want = `video/${o.codec}`.toLowerCase();
      const preferred = caps.codecs.filter((c) => c.mimeType.toLowerCase() === want);
      // H.264: prefer constrained baseline packetization-mode=1 (what our stack sends).
      preferred.sort((a, b) => Number(/packetization-mode=1/.test(b.sdpFmtpLine ?? '')) - Number(/packetization-mode=1/.test(a.sdpFmtpLine ?? '')));
      if (preferred.length) {
        const rest = caps.codecs.filter((c) => !preferred.includes(c));
        try {
          tr.setCodecPreferences([...preferred, ...rest]);
        } catch (e) {
          err(`setCodecPreferences: ${String(e)}`);
        }
      }
    }
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    sig.sendSignal(remote, o.pathId, { type: 'offer', sdp: pc.localDescription!.sdp });
  };

  const flushCandidates = async () => {
    for (const c of pendingCandidates.splice(0)) await pc.addIceCandidate(c).catch((e) => err(`addIceCandidate: ${String(e)}`));
  };

  sig.on('joined', ({ peers }) => {
    const other = peers.find((p) => p !== o.role);
    if (other) {
      remote = other;
      void negotiate().catch((e) => err(`negotiate: ${String(e)}`));
    }
  });
  sig.on('peer-joined', ({ peerId }) => {
    if (!remote) remote = peerId;
    void negotiate().catch((e) => err(`negotiate: ${String(e)}`));
  });
  sig.on('signal', ({ from, pathId, data }) => {
    if (pathId !== o.pathId) return;
    if (!remote) remote = from;
    const d = data as { type?: string; sdp?: string; candidate?: RTCIceCandidateInit };
    void (async () => {
      if (d.type === 'offer' && typeof d.sdp === 'string') {
        await pc.setRemoteDescription({ type: 'offer', sdp: d.sdp });
        haveRemoteDescription = true;
        await flushCandidates();
        const answer = await pc.createAnswer();
        await pc.setLocalDescription(answer);
        sig.sendSignal(from, o.pathId, { type: 'answer', sdp: pc.localDescription!.sdp });
      } else if (d.type === 'answer' && typeof d.sdp === 'string') {
        await pc.setRemoteDescription({ type: 'answer', sdp: d.sdp });
        haveRemoteDescription = true;
        await flushCandidates();
      } else if (d.type === 'candidate' && d.candidate) {
        if (!d.candidate.candidate) return; // end of candidates
        if (haveRemoteDescription) await pc.addIceCandidate(d.candidate);
        else if (pendingCandidates.length < 64) pendingCandidates.push(d.candidate);
      }
    })().catch((e) => err(`signal ${d.type}: ${String(e)}`));
  });
  sig.on('error', (e) => err(`signalling: ${e.code}: ${e.message}`));
  const joined = sig.connect(o.signallingUrl, o.room, o.role).catch((e) => err(`join: ${String(e)}`));

  return {
    pc,
    remoteTrack,
    errors,
    async send(track, audio) {
      await joined;
      trackToSend = track;
      audioToSend = audio;
      await negotiate();
    },
    async stats() {
      const out: NativeStats = { connectionState: pc.connectionState };
      const report = await pc.getStats();
      const byId = new Map<string, Record<string, unknown>>();
      report.forEach((r: Record<string, unknown>) => {
        byId.set(r.id as string, r);
      });
      for (const r of byId.values()) {
        if (r.kind === 'audio' && r.type === 'inbound-rtp') out.inboundAudio = pick(r, INBOUND_AUDIO);
        if (r.kind !== undefined && r.kind !== 'video') continue;
        if (r.type === 'inbound-rtp') {
          out.inbound = pick(r, INBOUND);
          const codec = byId.get(r.codecId as string);
          if (codec) out.codec = String(codec.mimeType);
        } else if (r.type === 'outbound-rtp') {
          out.outbound = pick(r, OUTBOUND);
          const codec = byId.get(r.codecId as string);
          if (codec) out.codec = String(codec.mimeType);
        } else if (r.type === 'remote-inbound-rtp') {
          out.remoteInbound = pick(r, REMOTE_INBOUND);
        } else if (r.type === 'transport') {
          const pair = byId.get(r.selectedCandidatePairId as string);
          if (pair) out.candidatePair = pick(pair, PAIR);
        }
      }
      return out;
    },
    close() {
      audioEl?.pause();
      pc.close();
      sig.close();
    },
  };
}
