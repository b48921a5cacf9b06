import { describe, expect, it } from 'vitest';
import { rtpCarrierOption } from '../../../src/call/peer-session.js';

describe('rtpCarrierOption (MultipathCallOptions.rtpCarrier as a path gets it)', () => {
  it("defaults to attach 'stall', also in the object form without attach", () => {
    expect(rtpCarrierOption(undefined)).toEqual({ attach: 'stall' });
    expect(rtpCarrierOption({})).toEqual({ attach: 'stall' });
    expect(rtpCarrierOption({ attach: undefined })).toEqual({ attach: 'stall' });
  });
  it("keeps an explicit attach, and true stays 'connect' (the path's own default)", () => {
    expect(rtpCarrierOption({ attach: 'connect' })).toEqual({ attach: 'connect' });
    expect(rtpCarrierOption({ attach: 'stall' })).toEqual({ attach: 'stall' });
    expect(rtpCarrierOption(true)).toBe(true);
  });
});
